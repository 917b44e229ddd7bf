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
