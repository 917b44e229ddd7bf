-- One row per (run_id, lane, item_id, attempt, judge_id, criterion_id, sample) of every
-- deep-research run: the verdict with the highest judge_attempt (a failed sample is retried on
-- resume as the next judge_attempt; then the later event, then the larger event id).
-- met scores as given (least favourable already applied for unparsed / failed samples);
-- flagged = the sample is unparsed or failed.
with

runs as (

    select * from {{ ref('int_draco_runs') }}

),

verdicts as (

    select verdicts.*
    from {{ ref('stg_events__judge_verdict') }} as verdicts
    inner join runs on verdicts.run_id = runs.run_id

),

resolved as (

    select
        *,
        count(*) over (
            partition by run_id, lane, item_id, attempt, judge_id, criterion_id, sample
        ) as n_judge_attempts
    from verdicts
    qualify row_number() over (
            partition by run_id, lane, item_id, attempt, judge_id, criterion_id, sample
            order by judge_attempt desc, occurred_at desc, verdict_event_id desc
        ) = 1

),

final as (

    select
        run_id,
        lane,
        item_id,
        attempt,
        judge_id,
        criterion_id,
        sample,
        judge_attempt,
        n_judge_attempts,
        polarity,
        outcome,
        verdict,
        met,
        outcome in ('unparsed', 'failed') as flagged,
        justification,
        reasks,
        error_class,
        source_event_id,
        llm_model,
        verdict_event_id
    from resolved

)

select * from final
