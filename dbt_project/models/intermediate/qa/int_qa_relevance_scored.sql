{%- set threshold = umbrela_threshold() %}
-- One row per (run_id, lane, item_id) with a resolved chunks event: UMBRELA chunk relevance
-- (methodology 2.4). Each chunk's grade is the run judge's relevance_graded of the chunks'
-- attempt (latest event on a tie). A failed judge call (relevance_graded outcome 'failed', written
-- with grade 0; in logs from before v2, provider_call_failed stage 'relevance:<rank>') or a chunk
-- never judged scores 0 and is flagged (least favourable).
-- Relevant = grade >= scoring_var('umbrela_threshold') (default 2, stored beside the metrics).
--   llm_hit_10       = 1 if any of the top-10 chunks is relevant (ref-harness "recall@k LLM")
--   llm_precision_10 = share of the top-10 chunks (of those returned) that are relevant
-- Zero chunks -> both 0. A run without a relevance judge -> both NULL.
with

units as (

    select
        units.run_id,
        units.lane,
        units.item_id,
        units.search_attempt,
        units.chunks_event_id,
        runs.judge_id
    from {{ ref('int_qa_units_resolved') }} as units
    inner join {{ ref('int_qa_runs') }} as runs on units.run_id = runs.run_id
    where units.chunks_event_id is not null

),

chunks as (

    select
        units.*,
        chunks.chunk_rank
    from units
    inner join {{ ref('stg_events__chunks_normalized') }} as chunks
        on units.chunks_event_id = chunks.chunks_event_id
    where chunks.chunk_rank is not null

),

legacy_failures as (

    select
        failed.call_event_id as relevance_event_id,
        failed.run_id,
        failed.occurred_at,
        failed.lane,
        failed.item_id,
        failed.attempt,
        cast(split_part(failed.stage, ':', 2) as bigint) as chunk_rank,
        runs.judge_id,
        cast(null as bigint) as grade,  -- scored below, as a v2 failed grade is
        false as parse_ok,
        'failed' as outcome
    from {{ ref('stg_events__provider_call_failed') }} as failed
    inner join {{ ref('int_qa_runs') }} as runs on failed.run_id = runs.run_id
    where failed.stage like 'relevance:%'

),

stored_grades as (

    select
        relevance_event_id,
        run_id,
        occurred_at,
        lane,
        item_id,
        attempt,
        chunk_rank,
        judge_id,
        grade,
        parse_ok,
        outcome
    from {{ ref('stg_events__relevance_graded') }}
    union all
    select * from legacy_failures

),

verdicts as (

    select relevance.*
    from stored_grades as relevance
    inner join units
        on relevance.run_id = units.run_id
            and relevance.lane = units.lane
            and relevance.item_id = units.item_id
            and relevance.attempt = units.search_attempt
            and relevance.judge_id = units.judge_id
    qualify row_number() over (
            partition by relevance.run_id, relevance.lane, relevance.item_id, relevance.chunk_rank
            order by relevance.occurred_at desc, relevance.relevance_event_id desc
        ) = 1

),

graded_chunks as (

    select
        chunks.run_id,
        chunks.lane,
        chunks.item_id,
        chunks.judge_id,
        chunks.chunk_rank,
        -- the one rule for a failed judge call (either shape) or a chunk never judged: 0,
        -- the grade least favourable to the lane, whatever the event stored
        case when verdicts.outcome = 'failed' then 0 else coalesce(verdicts.grade, 0) end as grade,
        -- flagged: unparseable verdict, failed judge call, or no verdict at all
        verdicts.relevance_event_id is null or not verdicts.parse_ok as flagged,
        coalesce(verdicts.outcome = 'failed', false) as call_failed
    from chunks
    left join verdicts
        on chunks.run_id = verdicts.run_id
            and chunks.lane = verdicts.lane
            and chunks.item_id = verdicts.item_id
            and chunks.chunk_rank = verdicts.chunk_rank

),

per_unit as (

    select
        run_id,
        lane,
        item_id,
        count(*) filter (where chunk_rank <= 10) as n_top_10,
        count(*) filter (where chunk_rank <= 10 and grade >= {{ threshold }}) as n_relevant_10,
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
        case
            when units.judge_id is null then null
            else coalesce(per_unit.n_relevant_10, 0) > 0
        end as llm_hit_10,
        case
            when units.judge_id is null then null
            when coalesce(per_unit.n_top_10, 0) = 0 then 0.0
            else cast(per_unit.n_relevant_10 as double) / per_unit.n_top_10
        end as llm_precision_10,
        coalesce(per_unit.n_relevance_flagged, 0) as n_relevance_flagged,
        coalesce(per_unit.n_relevance_call_failed, 0) as n_relevance_call_failed
    from units
    left join per_unit
        on units.run_id = per_unit.run_id
            and units.lane = per_unit.lane
            and units.item_id = per_unit.item_id

)

select * from final
