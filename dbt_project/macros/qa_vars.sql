{#- Question-answering scoring vars (docs/warehouse-contract.md, "Question answering marts"),
    validated where they are used so a typo fails the build with a readable message. -#}
{% macro qa_var_names() -%}
    {{ return([
        'qa_baseline_lane',
        'umbrela_threshold',
        'qa_correction',
        'qa_bootstrap_samples',
        'qa_bootstrap_seed',
        'series_noise_band_points',
        'url_normalizer_version',
        'lane_price_overrides',
    ]) }}
{%- endmacro %}

{% macro qa_baseline_lane() -%}
    {%- set lane = scoring_var('qa_baseline_lane') -%}
    {%- if lane is not string or lane | trim == '' -%}
        {{ exceptions.raise_compiler_error("var qa_baseline_lane must be a lane name; got " ~ lane) }}
    {%- endif -%}
    {{ return(lane) }}
{%- endmacro %}

{% macro qa_correction() -%}
    {%- set correction = scoring_var('qa_correction') -%}
    {%- if correction not in ['bonferroni', 'holm'] -%}
        {{ exceptions.raise_compiler_error(
            "var qa_correction must be bonferroni or holm; got " ~ correction) }}
    {%- endif -%}
    {{ return(correction) }}
{%- endmacro %}

{% macro umbrela_threshold() -%}
    {{ return(number_var('umbrela_threshold', 0, 3)) }}
{%- endmacro %}

{#- {lane: usd_per_1k}; replaces the lane_prices seed for the named lanes. -#}
{% macro lane_price_overrides() -%}
    {%- set overrides = scoring_var('lane_price_overrides') -%}
    {%- if overrides is none -%}{{ return({}) }}{%- endif -%}
    {%- if overrides is not mapping -%}
        {{ exceptions.raise_compiler_error(
            "var lane_price_overrides must be a mapping {lane: usd_per_1k}; got " ~ overrides) }}
    {%- endif -%}
    {%- for lane, price in overrides.items() -%}
        {%- if price is not number or price < 0 -%}
            {{ exceptions.raise_compiler_error(
                "var lane_price_overrides." ~ lane ~ " must be a number >= 0; got " ~ price) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(overrides) }}
{%- endmacro %}

{#- The benchmarks whose runs are question-answering runs. -#}
{% macro qa_benchmarks() -%}
    ('simpleqa', 'qa', 'vertical')
{%- endmacro %}

{#- The per-unit QA formulas (issue #28): the models call these, and dim_scoring_formulas renders
    them over named inputs for the app's what-if panel, so each rule is written here once. -#}

{#- UMBRELA (methodology 2.4): a chunk is relevant when its grade reaches the threshold. -#}
{% macro umbrela_relevant(grade, threshold) -%}
    {{ grade }} >= {{ threshold }}
{%- endmacro %}

{#- Aggregate select list over one unit's graded chunks: n_top_10 (chunks ranked 1-10) and
    n_relevant_10 (those relevant at `threshold`). -#}
{% macro umbrela_top_10_counts(threshold, chunk_rank='chunk_rank', grade='grade') -%}
    count(*) filter (where {{ chunk_rank }} <= 10) as n_top_10,
    count(*) filter (where {{ chunk_rank }} <= 10 and {{ umbrela_relevant(grade, threshold) }})
        as n_relevant_10
{%- endmacro %}

{#- 1 if any top-10 chunk is relevant (ref-harness "recall@k LLM"); a unit without chunks scores
    false; NULL when not `judged` (the run has no relevance judge). -#}
{% macro umbrela_llm_hit_10(n_relevant_10, judged) -%}
    case when not ({{ judged }}) then null else coalesce({{ n_relevant_10 }}, 0) > 0 end
{%- endmacro %}

{#- Share of the top-10 chunks (of those returned) that are relevant; zero chunks -> 0.0; NULL
    when not `judged`. -#}
{% macro umbrela_llm_precision_10(n_relevant_10, n_top_10, judged) -%}
    case
        when not ({{ judged }}) then null
        when coalesce({{ n_top_10 }}, 0) = 0 then 0.0
        else cast({{ n_relevant_10 }} as double) / {{ n_top_10 }}
    end
{%- endmacro %}

{#- A lane's mean of a per-question metric over its landed rows, in question order
    (stable_avg: bit-identical between builds). -#}
{% macro qa_landed_mean(expr) -%}
    {{ stable_avg(expr, order_by='sample_order, item_id', where='landed') }}
{%- endmacro %}

{#- A lane's run cost at a list price: usd_per_1k x attempted / 1000, attempted = landed +
    failed (as qa_leaderboard counts them). -#}
{% macro qa_run_cost(usd_per_1k, n_landed, n_failed) -%}
    {{ usd_per_1k }} * ({{ n_landed }} + {{ n_failed }}) / 1000.0
{%- endmacro %}
