{#- Deep-research (DRACO / rubric) scoring vars (docs/warehouse-contract.md, "Deep research
    (DRACO) marts"), validated where they are used so a typo fails the build readably. -#}
{% macro draco_var_names() -%}
    {{ return([
        'draco_penalty_floor',
        'draco_pass_threshold',
        'draco_bootstrap_seed',
        'draco_bootstrap_samples',
        'draco_correction',
        'draco_weight_override_rows',
    ]) }}
{%- endmacro %}

{#- null (penalties as registered) or a negative number: every weight below it is raised to it. -#}
{% macro draco_penalty_floor() -%}
    {%- set floor = scoring_var('draco_penalty_floor') -%}
    {%- if floor is none -%}{{ return(none) }}{%- endif -%}
    {%- if floor is not number or floor >= 0 -%}
        {{ exceptions.raise_compiler_error(
            "var draco_penalty_floor must be null or a number < 0; got " ~ floor) }}
    {%- endif -%}
    {{ return(floor) }}
{%- endmacro %}

{#- SQL literal of the floor: NULL when penalties stay as registered. -#}
{% macro draco_penalty_floor_sql() -%}
    {%- set floor = draco_penalty_floor() -%}
    {%- if floor is none -%}cast(null as double){%- else -%}cast({{ floor }} as double){%- endif -%}
{%- endmacro %}

{% macro draco_pass_threshold() -%}
    {{ return(number_var('draco_pass_threshold', 0, 1, min_inclusive=false)) }}
{%- endmacro %}

{% macro draco_correction() -%}
    {%- set correction = scoring_var('draco_correction') -%}
    {%- if correction not in ['bonferroni', 'holm'] -%}
        {{ exceptions.raise_compiler_error(
            "var draco_correction must be bonferroni or holm; got " ~ correction) }}
    {%- endif -%}
    {{ return(correction) }}
{%- endmacro %}

{#- The benchmarks whose runs are rubric-judged deep-research runs. -#}
{% macro draco_benchmarks() -%}
    ('draco', 'rubric')
{%- endmacro %}

{#- The rubric score (methodology 1.3): clamp(raw / P, 0, 1), with P = the positive weight mass.
    P <= 0 or NULL -> 0 (ref-harness). Written as a CASE because DuckDB's greatest / least
    ignore NULL arguments: greatest(0, NULL) is 0, which would hide an undefined ratio. A NULL
    raw (nothing judged) is raw 0. -#}
{% macro rubric_score(raw, positive_mass) -%}
    case
        when {{ positive_mass }} is null or {{ positive_mass }} <= 0 then 0.0
        when coalesce({{ raw }}, 0.0) / {{ positive_mass }} < 0 then 0.0
        when coalesce({{ raw }}, 0.0) / {{ positive_mass }} > 1 then 1.0
        else coalesce({{ raw }}, 0.0) / {{ positive_mass }}
    end
{%- endmacro %}

{#- A sum whose floating-point result does not depend on thread scheduling (see stable_avg). -#}
{% macro stable_sum(expr, order_by, where=none) -%}
    list_sum(list({{ expr }} order by {{ order_by }}){% if where %} filter (where {{ where }}){% endif %})
{%- endmacro %}

{#- The sums a rubric score is made of, over the criteria of one group (a whole item, or one
    axis of it, methodology 1.3): the counts, raw = sum(w * v_scored) and the positive mass P,
    summed in criterion order. One definition for the item and the axis grain. -#}
{% macro rubric_sums() -%}
        count(*) as n_criteria,
        count(*) filter (where judged) as n_criteria_judged,
        count(*) filter (where passed) as n_passed,
        count(*) filter (where split) as n_split,
        {{ rubric_mass() }}
{%- endmacro %}

{#- The two sums the score is made of: raw = sum(weighted_v) and the positive mass P, over rows
    with weighted_v (rubric_term), weight (in effect) and criterion_position. -#}
{% macro rubric_mass() -%}
        {{ stable_sum('weighted_v', 'criterion_position') }} as raw_score,
        {{ stable_sum('weight', 'criterion_position', where='weight > 0') }} as positive_weight
{%- endmacro %}

{#- What one criterion adds to the raw score: its weight in effect times v_scored (the verdict
    with missing samples at their least favourable value). -#}
{% macro rubric_term(weight, v_scored) -%}
    {{ weight }} * {{ v_scored }}
{%- endmacro %}

{#- A penalty below `floor` raised to it; a NULL floor leaves every weight as it is. -#}
{% macro floored_weight(weight, floor) -%}
    case when {{ weight }} < {{ floor }} then cast({{ floor }} as double) else {{ weight }} end
{%- endmacro %}

{#- The weight in effect (methodology 1.3, rescoring): the seed override when there is one, else
    the registered weight; then a penalty below scoring_var('draco_penalty_floor') is raised to it. -#}
{% macro draco_weight_in_effect(registered_weight, override_weight) -%}
    {%- set floor = draco_penalty_floor() -%}
    {%- set weight = 'cast(coalesce(' ~ override_weight ~ ', ' ~ registered_weight ~ ') as double)' -%}
    {%- if floor is none -%}
        {{ weight }}
    {%- else -%}
        {{ floored_weight(weight, floor) }}
    {%- endif -%}
{%- endmacro %}

{#- Whether the floor raised the weight (false when scoring_var('draco_penalty_floor') is null). -#}
{% macro draco_weight_floored(registered_weight, override_weight) -%}
    {%- set floor = draco_penalty_floor() -%}
    {%- if floor is none -%}
        false
    {%- else -%}
        coalesce(coalesce({{ override_weight }}, {{ registered_weight }}) < {{ floor }}, false)
    {%- endif -%}
{%- endmacro %}

{#- Weight overrides given at rescoring time (`bench rescore --draco-weights FILE`), as rows of
    scoring_var('draco_weight_override_rows'): [{item_id, criterion_id, weight, reason}]. They win over
    the draco_weight_overrides seed for the same criterion. Validated here so a malformed var
    fails the build readably. -#}
{% macro draco_var_override_rows_sql() -%}
    {%- set rows = scoring_var('draco_weight_override_rows', []) -%}
    {%- if rows is string or rows is mapping or rows is not iterable -%}
        {{ exceptions.raise_compiler_error(
            "var draco_weight_override_rows must be a list of {item_id, criterion_id, weight, reason}") }}
    {%- endif -%}
    {%- if rows | length == 0 -%}
        select
            cast(null as varchar) as item_id,
            cast(null as varchar) as criterion_id,
            cast(null as double) as weight,
            cast(null as varchar) as reason
        where false
    {%- else -%}
        select * from (values
        {%- for row in rows %}
            {%- if row is not mapping or row.get('item_id') is none or row.get('criterion_id') is none
                or row.get('weight') is not number -%}
                {{ exceptions.raise_compiler_error(
                    "var draco_weight_override_rows[" ~ loop.index0 ~ "]: needs item_id, criterion_id and a numeric weight; got " ~ row) }}
            {%- endif %}
            ({{ dbt.string_literal(row['item_id']) }}, {{ dbt.string_literal(row['criterion_id']) }},
             cast({{ row['weight'] }} as double), {{ dbt.string_literal(row.get('reason') or 'bench rescore --draco-weights') }})
            {%- if not loop.last %},{% endif %}
        {%- endfor %}
        ) as override_rows (item_id, criterion_id, weight, reason)
    {%- endif -%}
{%- endmacro %}

{#- The scoring met of one judge sample (methodology 1.2, least favourable verdict; flaw 5.1),
    never the event's own met: a parsed MET/UNMET counts as judged; anything else (unparsed,
    failed, a parsed sample without a verdict) is UNMET for a positive criterion and MET (the
    penalty applies) for a negative one. The one place the rule lives. -#}
{% macro draco_met_scored(outcome='outcome', verdict='verdict', polarity='polarity') -%}
    case
        when {{ outcome }} = 'parsed' and {{ verdict }} in ('MET', 'UNMET') then {{ verdict }} = 'MET'
        else {{ polarity }} = 'negative'
    end
{%- endmacro %}
