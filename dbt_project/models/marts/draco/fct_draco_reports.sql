-- One row per research outcome of every deep-research run, for lineage (nothing here is scored):
--   status 'reported'   one row per report_normalized event, i.e. per (run_id, lane, item_id,
--                       attempt, normalizer_version), beside the research_completed it was
--                       derived from;
--   status 'unreported' a research_completed that no report_normalized was derived from yet
--                       (normalizer_version NULL);
--   status 'failed'     one row per research_failed event (normalizer_version NULL), with the
--                       error: failures stay visible, never dropped.
-- Grain: (run_id, lane, item_id, attempt, normalizer_version); lineage_event_id (the row's own
-- event: report, else research, else failure) is the single-column key.
-- is_latest_attempt: the attempt is the highest research attempt (completed or failed) of its
-- (run_id, lane, item_id). raw_citations / bibliography are JSON as stored.
with

runs as (

    select * from {{ ref('int_draco_runs') }}

),

completed as (

    select completed.*
    from {{ ref('stg_events__research_completed') }} as completed
    inner join runs on completed.run_id = runs.run_id

),

failed as (

    select failed.*
    from {{ ref('stg_events__research_failed') }} as failed
    inner join runs on failed.run_id = runs.run_id

),

reports as (

    select reports.*
    from {{ ref('stg_events__report_normalized') }} as reports
    inner join runs on reports.run_id = runs.run_id

),

reported as (

    select
        reports.run_id,
        reports.lane,
        reports.item_id,
        reports.attempt,
        reports.normalizer_version,
        'reported' as status,
        completed.research_event_id,
        cast(null as varchar) as research_failed_event_id,
        reports.report_event_id,
        reports.report_event_id as lineage_event_id
    from reports
    left join completed on reports.source_event_id = completed.research_event_id

),

unreported as (

    select
        completed.run_id,
        completed.lane,
        completed.item_id,
        completed.attempt,
        cast(null as varchar) as normalizer_version,
        'unreported' as status,
        completed.research_event_id,
        cast(null as varchar) as research_failed_event_id,
        cast(null as varchar) as report_event_id,
        completed.research_event_id as lineage_event_id
    from completed
    left join reports on completed.research_event_id = reports.source_event_id
    where reports.report_event_id is null

),

failures as (

    select
        run_id,
        lane,
        item_id,
        attempt,
        cast(null as varchar) as normalizer_version,
        'failed' as status,
        cast(null as varchar) as research_event_id,
        research_failed_event_id,
        cast(null as varchar) as report_event_id,
        research_failed_event_id as lineage_event_id
    from failed

),

outcomes as (

    select * from reported
    union all
    select * from unreported
    union all
    select * from failures

),

attempts as (

    select
        run_id,
        lane,
        item_id,
        attempt
    from completed
    union all
    select
        run_id,
        lane,
        item_id,
        attempt
    from failed

),

latest_attempts as (

    select
        run_id,
        lane,
        item_id,
        max(attempt) as latest_attempt
    from attempts
    group by run_id, lane, item_id

),

final as (

    select
        outcomes.run_id,
        outcomes.lane,
        outcomes.item_id,
        outcomes.attempt,
        outcomes.normalizer_version,
        outcomes.status,
        outcomes.attempt = latest_attempts.latest_attempt as is_latest_attempt,
        coalesce(completed.provider, failed.provider) as provider,
        coalesce(completed.vendor_run_id, failed.vendor_run_id) as vendor_run_id,
        completed.raw_output,
        completed.raw_citations,
        completed.n_raw_citations,
        completed.instruction_sha256,
        completed.submitted_at,
        completed.finished_at,
        coalesce(completed.wall_clock_ms, failed.wall_clock_ms) as wall_clock_ms,
        completed.queue_ms,
        completed.polls,
        completed.poll_interval_s,
        completed.cost_usd,
        completed.cost_basis,
        completed.usage,
        failed.stage as error_stage,
        failed.error_class,
        failed.error_message,
        reports.raw_output_sha256,
        reports.judged_text,
        reports.bibliography,
        reports.n_bibliography,
        reports.stripped_bibliography,
        reports.strip_heading,
        reports.stripped_text,
        coalesce(completed.source_event_ids, failed.source_event_ids) as source_event_ids,
        outcomes.research_event_id,
        outcomes.research_failed_event_id,
        outcomes.report_event_id,
        outcomes.lineage_event_id
    from outcomes
    left join completed on outcomes.research_event_id = completed.research_event_id
    left join failed on outcomes.research_failed_event_id = failed.research_failed_event_id
    left join reports on outcomes.report_event_id = reports.report_event_id
    left join latest_attempts
        on outcomes.run_id = latest_attempts.run_id
            and outcomes.lane = latest_attempts.lane
            and outcomes.item_id = latest_attempts.item_id

)

select * from final
