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

{#- The extraction composite's components: weight name -> the leaderboard column it weighs.
    The names a user may weigh are the keys of var `extraction_weights` in dbt_project.yml (the
    one list; `bench` and rescore validation read it there); this map says how each is measured
    and must name exactly those keys. -#}
{% macro extraction_weight_components() -%}
    {{ return({
        'completeness': 'completeness',
        'success': 'useful_success_rate',
        'f1': 'token_f1',
        'latency': 'latency_score',
        'throughput': 'throughput_score',
        'shingle_precision': 'shingle_precision',
        'shingle_recall': 'shingle_recall',
        'shingle_f1': 'shingle_f1',
    }) }}
{%- endmacro %}

{#- The published seed composite (methodology §4.1, the live-URL benchmark's weights): kept
    beside the user's composite under its own name, whatever `extraction_weights` says. -#}
{% macro seed_extraction_weights() -%}
    {{ return({
        'completeness': 0.40,
        'success': 0.30,
        'f1': 0.20,
        'latency': 0.05,
        'throughput': 0.05,
    }) }}
{%- endmacro %}

{#- The active weights with every component present: a name the override leaves out weighs 0
    (so `--weights completeness=1` means completeness alone); an unknown name or a negative or
    non-numeric weight fails the build. -#}
{% macro extraction_weights() -%}
    {%- set components = extraction_weight_components() -%}
    {%- set weights = scoring_var('extraction_weights') -%}
    {%- if weights is not mapping -%}
        {{ exceptions.raise_compiler_error(
            "var extraction_weights must be a mapping with keys among "
            ~ components.keys() | list | join(', ') ~ "; got " ~ weights) }}
    {%- endif -%}
    {%- set unknown = weights.keys() | reject('in', components.keys() | list) | list -%}
    {%- if unknown -%}
        {{ exceptions.raise_compiler_error(
            "var extraction_weights: unknown weight(s) " ~ unknown | sort | join(', ')
            ~ "; known: " ~ components.keys() | list | join(', ')) }}
    {%- endif -%}
    {#- THE rule of a valid weighting, in one place: `bench rescore --weights` and the app's
        what-if panels evaluate this very macro before dbt starts
        (warehouse/scoring_vars.py:parse_weights, through warehouse/dbt_macros.py), so dbt run
        by hand, an edited scoring.json and the CLI refuse the same sets: each weight a finite
        number in [0, 1], the set summing to 1 (within 1e-9), a component left out weighing 0. -#}
    {%- set full = {} -%}
    {%- for key in components -%}
        {%- set value = weights.get(key, 0) -%}
        {%- if value is not number or value is sameas true or value is sameas false
            or value != value or value < 0 or value > 1 -%}
            {{ exceptions.raise_compiler_error(
                "var extraction_weights: " ~ key ~ "=" ~ value
                ~ ": each weight must be a finite number in [0, 1]") }}
        {%- endif -%}
        {%- do full.update({key: value}) -%}
    {%- endfor -%}
    {%- set total = full.values() | sum -%}
    {%- if (total - 1) | abs > 1e-9 -%}
        {{ exceptions.raise_compiler_error(
            "var extraction_weights: the weights must sum to 1 (they sum to " ~ total
            ~ "); a component left out weighs 0") }}
    {%- endif -%}
    {{ return(full) }}
{%- endmacro %}

{#- sum(weight × coalesce(component, 0)) over `weights`, reading components from `relation`.
    A term that cannot be measured contributes 0; the weights are not renormalised. -#}
{% macro extraction_composite(weights, relation) -%}
    {%- set components = extraction_weight_components() -%}
    (
    {%- for key, weight in weights.items() %}
        cast({{ weight }} as double) * coalesce({{ relation }}.{{ components[key] }}, 0)
        {%- if not loop.last %} +{% endif %}
    {%- endfor %}
    )
{%- endmacro %}

{#- The value of a scoring var in effect. `bench` passes the active values as JSON in the
    environment (BENCH_SCORING_VARS), not as --vars, and this reads it only while a model runs
    (`execute`), never while dbt parses: dbt re-parses the whole project whenever --vars change,
    and every file that read an environment variable whose value changed, so either would make
    each rescore pay for a parse. While parsing (and without the variable: dbt run by hand,
    unit tests) this is plain var(). The Python models do the same (python/bench_vars.py). -#}
{% macro scoring_var(name, default=none) -%}
    {%- if execute -%}
        {%- set active = fromjson(env_var('BENCH_SCORING_VARS', '{}')) -%}
        {%- if name in active -%}
            {{ return(active[name]) }}
        {%- endif -%}
    {%- endif -%}
    {{ return(var(name) if default is none else var(name, default)) }}
{%- endmacro %}

{% macro number_var(name, min_value, max_value=none, min_inclusive=true) -%}
    {%- set value = scoring_var(name) -%}
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
