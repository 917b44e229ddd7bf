{#- Scores live in a closed interval; NULL passes (NULL means "undefined", tested elsewhere). -#}
{% test value_between(model, column_name, min_value, max_value) %}
    select {{ column_name }}
    from {{ model }}
    where {{ column_name }} < {{ min_value }} or {{ column_name }} > {{ max_value }}
{% endtest %}
