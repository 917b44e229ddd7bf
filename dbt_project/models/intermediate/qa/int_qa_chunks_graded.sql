-- One row per (run_id, lane, item_id, chunk_rank): each chunk of a resolved chunks event, with
-- the UMBRELA grade it scores (methodology 2.4) before any threshold. The grade is the run
-- judge's relevance_graded of the chunks' attempt (latest event on a tie). A failed judge call
-- (relevance_graded outcome 'failed', written with grade 0; in logs from before v2,
-- provider_call_failed stage 'relevance:<rank>') or a chunk never judged scores 0 and is flagged
-- (least favourable). A chunks event with zero chunks has no row here (its unit scores 0 in
-- int_qa_relevance_scored). Read by int_qa_relevance_scored and published as
-- fct_qa_graded_chunks, so the what-if panel applies the threshold to these very grades.
with

units as (

    select
        run_id,
        lane,
        item_id,
        search_attempt,
        chunks_event_id,
        relevance_judge_id as judge_id
    from {{ ref('int_qa_units_resolved') }}
    where chunks_event_id is not null

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

final as (

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
        coalesce(verdicts.outcome = 'failed', false) as call_failed,
        verdicts.relevance_event_id,
        chunks.chunks_event_id
    from chunks
    left join verdicts
        on chunks.run_id = verdicts.run_id
            and chunks.lane = verdicts.lane
            and chunks.item_id = verdicts.item_id
            and chunks.chunk_rank = verdicts.chunk_rank

)

select * from final
