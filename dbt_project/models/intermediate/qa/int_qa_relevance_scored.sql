{%- set threshold = umbrela_threshold() %}
-- One row per (run_id, lane, item_id) with a resolved chunks event: UMBRELA chunk relevance
-- (methodology 2.4) over the graded chunks of int_qa_chunks_graded (where the grade rules live:
-- latest verdict of the run judge, a failed call or a chunk never judged scores 0 and is flagged).
-- The per-unit formulas are macros (macros/qa_vars.sql), published in dim_scoring_formulas:
--   relevant         = grade >= scoring_var('umbrela_threshold') (default 2, stored beside
--                      the metrics)
--   llm_hit_10       = 1 if any of the top-10 chunks is relevant (ref-harness "recall@k LLM")
--   llm_precision_10 = share of the top-10 chunks (of those returned) that are relevant
-- Zero chunks -> both 0. A run without a relevance judge -> both NULL.
with

units as (

    select
        run_id,
        lane,
        item_id,
        relevance_judge_id as judge_id
    from {{ ref('int_qa_units_resolved') }}
    where chunks_event_id is not null

),

graded_chunks as (

    select * from {{ ref('int_qa_chunks_graded') }}

),

per_unit as (

    select
        run_id,
        lane,
        item_id,
        {{ umbrela_top_10_counts(threshold) }},
        count(*) filter (where flagged) as n_relevance_flagged,
        count(*) filter (where call_failed) as n_relevance_call_failed
    from graded_chunks
    group by run_id, lane, item_id

),

final as (

    select
        units.run_id,
        units.lane,
        units.item_id,
        cast({{ threshold }} as double) as relevance_threshold,
        {{ umbrela_llm_hit_10('per_unit.n_relevant_10', 'units.judge_id is not null') }}
            as llm_hit_10,
        {{ umbrela_llm_precision_10(
            'per_unit.n_relevant_10', 'per_unit.n_top_10', 'units.judge_id is not null') }}
            as llm_precision_10,
        coalesce(per_unit.n_relevance_flagged, 0) as n_relevance_flagged,
        coalesce(per_unit.n_relevance_call_failed, 0) as n_relevance_call_failed
    from units
    left join per_unit
        on units.run_id = per_unit.run_id
            and units.lane = per_unit.lane
            and units.item_id = per_unit.item_id

)

select * from final
