-- Systems of a run = those declared in run_started, plus any that reported an extraction
-- without being declared (so no output is silently left out of the grid).
with

run_started as (

    select * from {{ ref('int_runs_started') }}

),

extraction_events as (

    select
        run_id,
        system,
        system_version,
        occurred_at,
        extraction_event_id
    from {{ ref('stg_events__extraction_completed') }}
    union all
    select
        run_id,
        system,
        system_version,
        occurred_at,
        extraction_event_id
    from {{ ref('stg_events__extraction_failed') }}

),

declared_refs as (

    select
        run_id,
        unnest(from_json(systems, '[{"name": "VARCHAR", "version": "VARCHAR"}]')) as system_ref
    from run_started

),

declared as (

    select
        declared_refs.run_id,
        declared_refs.system_ref.name as system,
        any_value(declared_refs.system_ref.version) as declared_version
    from declared_refs
    group by declared_refs.run_id, declared_refs.system_ref.name

),

seen as (

    select
        run_id,
        system,
        arg_max(system_version, (occurred_at, extraction_event_id)) as latest_seen_version
    from extraction_events
    group by run_id, system

),

unioned as (

    select
        coalesce(declared.run_id, seen.run_id) as run_id,
        coalesce(declared.system, seen.system) as system,
        coalesce(declared.declared_version, seen.latest_seen_version) as system_version,
        declared.system is not null as is_declared
    from declared
    full outer join seen
        on declared.run_id = seen.run_id and declared.system = seen.system

)

select * from unioned
