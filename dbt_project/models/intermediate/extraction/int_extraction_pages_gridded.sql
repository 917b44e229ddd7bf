-- The full grid of an extraction run: every registered item x every system of the run. A pair
-- with no terminal event is a page with outcome 'missing' (scored 0, never dropped).
with

runs as (

    select
        run_id,
        run_source,
        dataset_sha256
    from {{ ref('int_runs_started') }}
    where benchmark = 'extraction'

),

items as (

    select * from {{ ref('stg_events__item_registered') }}

),

systems as (

    select * from {{ ref('int_run_systems_unioned') }}

),

attempts as (

    select * from {{ ref('int_extraction_attempts_resolved') }}

),

grid as (

    select
        runs.run_id,
        runs.run_source,
        coalesce(runs.dataset_sha256, items.dataset_sha256) as dataset_sha256,
        systems.system,
        systems.system_version as run_system_version,
        items.item_id,
        items.position,
        items.url,
        items.ground_truth_text,
        items.anchors,
        items.item_event_id
    from runs
    inner join items on runs.run_id = items.run_id
    inner join systems on runs.run_id = systems.run_id
    -- an excluded item (item_excluded, int_corrections_items_excluded) leaves every score
    where not {{ is_excluded_item(
        'extraction', 'runs.run_id', 'items.item_id',
        'coalesce(runs.dataset_sha256, items.dataset_sha256)') }}

),

joined as (

    select
        grid.run_id,
        grid.run_source,
        grid.dataset_sha256,
        grid.system,
        coalesce(attempts.system_version, grid.run_system_version) as system_version,
        grid.run_system_version,
        grid.item_id,
        grid.position,
        grid.url,
        grid.ground_truth_text,
        grid.anchors,
        grid.item_event_id,
        coalesce(attempts.outcome, 'missing') as outcome,
        attempts.attempt,
        coalesce(attempts.n_attempts, 0) as n_attempts,
        attempts.output_text,
        attempts.output_bytes,
        attempts.latency_ms,
        attempts.error_class,
        attempts.error_message,
        attempts.extraction_source,
        attempts.render_path,
        attempts.extraction_event_id,
        attempts.extraction_content_sha256
    from grid
    left join attempts
        on
            grid.run_id = attempts.run_id
            and grid.item_id = attempts.item_id
            and grid.system = attempts.system

)

select * from joined
