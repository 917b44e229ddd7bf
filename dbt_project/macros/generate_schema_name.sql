{#- Schemas are exactly `staging`, `intermediate`, `marts` (not `<target>_<custom>`): the publish
    step and the app address them by those names. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
