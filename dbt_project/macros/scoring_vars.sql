{#- The scoring vars, validated once so a typo fails the build with a readable message
    instead of silently scoring with a missing weight. -#}
{% macro scoring_var_names() -%}
    {{ return([
        'extraction_weights',
        'useful_success_threshold',
        'bootstrap_seed',
        'bootstrap_samples',
        'latency_scale_s',
        'throughput_full_bytes',
        'non_content_rules_version',
    ]) }}
{%- endmacro %}

{% macro extraction_weights() -%}
    {%- set expected = ['completeness', 'success', 'f1', 'latency', 'throughput'] -%}
    {%- set weights = var('extraction_weights') -%}
    {%- if weights is not mapping -%}
        {{ exceptions.raise_compiler_error(
            "var extraction_weights must be a mapping with keys " ~ expected | join(', ')
            ~ "; got " ~ weights) }}
    {%- endif -%}
    {%- if weights.keys() | list | sort != expected | sort -%}
        {{ exceptions.raise_compiler_error(
            "var extraction_weights must have exactly the keys " ~ expected | join(', ')
            ~ "; got " ~ weights.keys() | list | sort | join(', ')) }}
    {%- endif -%}
    {%- for key in expected -%}
        {%- if weights[key] is not number or weights[key] < 0 -%}
            {{ exceptions.raise_compiler_error(
                "var extraction_weights." ~ key ~ " must be a number >= 0; got " ~ weights[key]) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(weights) }}
{%- endmacro %}

{% macro number_var(name, min_value, max_value=none, min_inclusive=true) -%}
    {%- set value = var(name) -%}
    {%- set too_low = value < min_value if min_inclusive else value <= min_value -%}
    {%- if value is not number or too_low or (max_value is not none and value > max_value) -%}
        {{ exceptions.raise_compiler_error(
            "var " ~ name ~ " must be a number " ~ (">= " if min_inclusive else "> ") ~ min_value
            ~ ("" if max_value is none else " and <= " ~ max_value) ~ "; got " ~ value) }}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}

{% macro sql_json_literal(value) -%}
    cast('{{ tojson(value, sort_keys=true) | replace("'", "''") }}' as json)
{%- endmacro %}
