-- One row per (run_id, lane) of every deep-research run: the lanes declared in run_started
-- (systems) plus any lane that reported research without being declared, so no report is
-- silently left out of the grid.
with

runs as (

    select * from {{ ref('int_draco_runs') }}

),

declared as (

    select distinct
        runs.run_id,
        system.value ->> 'name' as lane
    from runs, json_each(runs.systems) as system

),

research as (

    select
        run_id,
        lane,
        provider
    from {{ ref('stg_events__research_completed') }}
    union all
    select
        run_id,
        lane,
        provider
    from {{ ref('stg_events__research_failed') }}

),

seen as (

    select distinct
        research.run_id,
        research.lane
    from research
    inner join runs on research.run_id = runs.run_id

),

final as (

    select
        declared.run_id,
        declared.lane,
        true as is_declared
    from declared
    union all
    select
        seen.run_id,
        seen.lane,
        false as is_declared
    from seen
    where not exists (
            select 1 as found from declared
            where declared.run_id = seen.run_id and declared.lane = seen.lane
        )

)

select * from final
