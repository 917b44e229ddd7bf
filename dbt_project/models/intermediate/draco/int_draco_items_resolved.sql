-- One row per (run_id, lane, item_id, judge_id) of every deep-research run: every registered
-- task x every lane of the run x every judge regime of the run (items are never dropped), with
-- the research attempt that is scored (methodology 1.4, "the latest successful attempt"):
--   * the latest attempt with research_completed AND its report_normalized of the regime's
--     normalizer_version (any version for a judge without registration) -> research_state
--     'reported';
--   * else the latest research_completed without that report -> 'unreported' (research
--     succeeded, judging cannot have started: the item is incomplete);
--   * else any research_failed -> 'failed' (error from the latest failed attempt);
--   * else 'missing' (no terminal research event yet).
-- Cost of the resolved completion: its cost_usd with its cost_basis when reported, else the
-- research_prices seed price of the lane with that basis; failed and missing items cost NULL.
-- A cost an import run recorded is the file's own figure: basis 'imported', whatever the event
-- says (imports written before the 'imported' basis existed said 'billed').
with

runs as (

    select * from {{ ref('int_draco_runs') }}

),

tasks as (

    select tasks.*
    from {{ ref('stg_events__rubric_task_registered') }} as tasks
    inner join runs on tasks.run_id = runs.run_id

),

lanes as (

    select * from {{ ref('int_draco_run_lanes') }}

),

judges as (

    select * from {{ ref('int_draco_run_judges') }}

),

completed as (

    select * from {{ ref('stg_events__research_completed') }}

),

failed as (

    select * from {{ ref('stg_events__research_failed') }}

),

reports as (

    select * from {{ ref('stg_events__report_normalized') }}

),

prices as (

    select * from {{ ref('research_prices') }}

),

grid as (

    select
        tasks.run_id,
        lanes.lane,
        tasks.item_id,
        judges.judge_id,
        judges.normalizer_version as judge_normalizer_version,
        runs.benchmark,
        tasks.dataset_sha256,
        tasks.position,
        tasks.domain,
        tasks.rubric_id,
        tasks.task_event_id
    from tasks
    inner join runs on tasks.run_id = runs.run_id
    inner join lanes on tasks.run_id = lanes.run_id
    inner join judges on tasks.run_id = judges.run_id
    -- an excluded item (item_excluded, int_corrections_items_excluded) leaves every score
    where not {{ is_excluded_item('draco', 'tasks.run_id', 'tasks.item_id', 'tasks.dataset_sha256') }}

),

reported as (

    select
        grid.run_id,
        grid.lane,
        grid.item_id,
        grid.judge_id,
        completed.attempt,
        completed.research_event_id,
        reports.report_event_id
    from grid
    inner join completed
        on grid.run_id = completed.run_id
            and grid.lane = completed.lane
            and grid.item_id = completed.item_id
    inner join reports
        on completed.run_id = reports.run_id
            and completed.lane = reports.lane
            and completed.item_id = reports.item_id
            and completed.attempt = reports.attempt
            and (
                grid.judge_normalizer_version = reports.normalizer_version
                or grid.judge_normalizer_version is null
            )
    qualify row_number() over (
            partition by grid.run_id, grid.lane, grid.item_id, grid.judge_id
            order by completed.attempt desc, reports.occurred_at desc, reports.report_event_id desc
        ) = 1

),

latest_completed as (

    select * from completed
    qualify row_number() over (
            partition by run_id, lane, item_id
            order by attempt desc, occurred_at desc, research_event_id desc
        ) = 1

),

latest_failed as (

    select * from failed
    qualify row_number() over (
            partition by run_id, lane, item_id
            order by attempt desc, occurred_at desc, research_failed_event_id desc
        ) = 1

),

resolved as (

    select
        grid.*,
        case
            when reported.research_event_id is not null then 'reported'
            when latest_completed.research_event_id is not null then 'unreported'
            when latest_failed.research_failed_event_id is not null then 'failed'
            else 'missing'
        end as research_state,
        coalesce(reported.research_event_id, latest_completed.research_event_id)
            as research_event_id,
        reported.report_event_id,
        latest_failed.research_failed_event_id,
        latest_failed.attempt as failed_attempt,
        latest_failed.error_class as failed_error_class,
        latest_failed.error_message as failed_error_message,
        latest_failed.stage as failed_stage
    from grid
    left join reported
        on grid.run_id = reported.run_id
            and grid.lane = reported.lane
            and grid.item_id = reported.item_id
            and grid.judge_id = reported.judge_id
    left join latest_completed
        on grid.run_id = latest_completed.run_id
            and grid.lane = latest_completed.lane
            and grid.item_id = latest_completed.item_id
    left join latest_failed
        on grid.run_id = latest_failed.run_id
            and grid.lane = latest_failed.lane
            and grid.item_id = latest_failed.item_id

),

final as (

    select
        resolved.run_id,
        resolved.lane,
        resolved.item_id,
        resolved.judge_id,
        resolved.benchmark,
        resolved.dataset_sha256,
        resolved.position,
        resolved.domain,
        resolved.rubric_id,
        resolved.research_state,
        case
            when resolved.research_state in ('reported', 'unreported') then completed.attempt
            else resolved.failed_attempt
        end as attempt,
        coalesce(completed.provider, prices.provider) as provider,
        completed.vendor_run_id,
        case when resolved.research_state = 'failed' then resolved.failed_stage end as error_stage,
        case when resolved.research_state = 'failed' then resolved.failed_error_class end as error_class,
        case when resolved.research_state = 'failed' then resolved.failed_error_message end
            as error_message,
        completed.wall_clock_ms,
        completed.queue_ms,
        completed.poll_interval_s,
        completed.polls,
        completed.n_raw_citations,
        reports.normalizer_version,
        reports.stripped_bibliography,
        reports.n_bibliography,
        case
            when completed.cost_usd is not null then completed.cost_usd
            when completed.research_event_id is not null then prices.usd_per_task
        end as cost_usd,
        case
            when completed.cost_usd is not null and runs.run_source = 'import' then 'imported'
            when completed.cost_usd is not null then completed.cost_basis
            when completed.research_event_id is not null and prices.usd_per_task is not null
                then prices.basis
        end as cost_basis,
        case
            when completed.cost_usd is null and completed.research_event_id is not null
                then prices.price_snapshot_date
        end as price_snapshot_date,
        resolved.task_event_id,
        resolved.research_event_id,
        resolved.report_event_id,
        resolved.research_failed_event_id
    from resolved
    left join completed on resolved.research_event_id = completed.research_event_id
    left join reports on resolved.report_event_id = reports.report_event_id
    left join prices on resolved.lane = prices.lane
    left join runs on resolved.run_id = runs.run_id

)

select * from final
