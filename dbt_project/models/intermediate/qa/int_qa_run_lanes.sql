-- One row per (run_id, lane): the lanes declared in run_started plus any lane that reported an
-- answer without being declared. has_search = false only for a lane declared without search
-- (the closed-book control, settings.search = null): it has no retrieval metrics.
with

runs as (

    select * from {{ ref('int_qa_runs') }}

),

declared as (

    select
        runs.run_id,
        system.value ->> 'name' as lane,
        not coalesce(
            json_exists(system.value, '$.settings.search')
            and json_type(system.value, '$.settings.search') = 'NULL',
            false
        ) as has_search
    from runs, json_each(runs.systems) as system

),

seen as (

    select distinct
        answers.run_id,
        answers.lane
    from {{ ref('stg_events__answer_synthesized') }} as answers
    inner join runs on answers.run_id = runs.run_id

),

final as (

    select
        declared.run_id,
        declared.lane,
        declared.has_search,
        true as is_declared
    from declared
    union all
    select
        seen.run_id,
        seen.lane,
        true as has_search,
        false as is_declared
    from seen
    where not exists (
            select 1 as found from declared
            where declared.run_id = seen.run_id and declared.lane = seen.lane
        )

)

select * from final
