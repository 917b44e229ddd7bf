{#-
    Mean whose floating-point result does not depend on thread scheduling: the values are summed
    in `order_by` order in one list, so `bench rebuild` reproduces marts bit for bit (a plain
    avg() sums in parallel chunks and can differ in the last bits between two builds).
-#}
{% macro stable_avg(expr, order_by='item_id', where=none) -%}
    list_avg(list({{ expr }} order by {{ order_by }}){% if where %} filter (where {{ where }}){% endif %})
{%- endmacro %}
