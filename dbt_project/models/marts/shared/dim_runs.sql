with

events as (

    select * from {{ ref('stg_events') }}

),

run_started as (

    select * from {{ ref('int_runs_started') }}

),

run_finished as (

    select * from {{ ref('stg_events__run_finished') }}

),

items as (

    select * from {{ ref('stg_events__item_registered') }}

),

attempts as (

    select * from {{ ref('int_extraction_attempts_resolved') }}

),

rubric_tasks as (

    select * from {{ ref('stg_events__rubric_task_registered') }}

),

questions as (

    select * from {{ ref('stg_events__question_registered') }}

),

-- question answering: the latest answer of each (run, lane, question); only outcome "failed"
-- (no usable search) is a failure, a refusal or zero results is a completed answer
answers_resolved as (

    select
        run_id,
        case when outcome = 'failed' then 'failed' else 'completed' end as outcome
    from {{ ref('stg_events__answer_synthesized') }}
    qualify row_number() over (
            partition by run_id, lane, item_id order by attempt desc, occurred_at desc, answer_event_id desc
        ) = 1

),

-- deep research: the latest research attempt of each (run, lane, task), completed or failed
research_attempts as (

    select
        run_id,
        lane,
        item_id,
        attempt,
        occurred_at,
        research_event_id as event_id,
        'completed' as outcome
    from {{ ref('stg_events__research_completed') }}
    union all
    select
        run_id,
        lane,
        item_id,
        attempt,
        occurred_at,
        research_failed_event_id as event_id,
        'failed' as outcome
    from {{ ref('stg_events__research_failed') }}

),

research_resolved as (

    select * from research_attempts
    qualify row_number() over (
            partition by run_id, lane, item_id order by attempt desc, occurred_at desc, event_id desc
        ) = 1

),

-- live-URL extraction: the URLs a run registered, and the latest attempt of each (run, URL,
-- engine), completed or failed (int_live_extraction_grid keeps the same one)
live_urls as (

    select * from {{ ref('stg_events__live_url_registered') }}

),

live_resolved as (

    select
        run_id,
        outcome
    from {{ ref('stg_events__live_extraction_recorded') }}
    qualify row_number() over (
            partition by run_id, item_id, system order by attempt desc, extraction_event_id asc
        ) = 1

),

-- every run that has any event, so a run whose run_started is missing still shows up
run_ids as (

    select
        run_id,
        max(occurred_at) filter (
            where event_type in (
                'item_registered', 'extraction_completed', 'extraction_failed',
                'rubric_task_registered', 'research_completed', 'research_failed',
                'report_normalized', 'judge_verdict', 'live_url_registered',
                'live_extraction_recorded'
            )
        ) as last_work_at
    from events
    group by run_id

),

-- a run split across machines (`bench run … --shard K/N`) is finished once every shard is
finished as (

    select
        run_id,
        max(finished_at) as finished_at,
        max(shards) as n_shards,
        count(distinct shard) as n_shards_finished
    from run_finished
    group by run_id

),

registered as (

    select
        run_id,
        count(*) as n_items_registered
    from (
        select run_id from items
        union all
        select run_id from rubric_tasks
        union all
        select run_id from questions
        union all
        select run_id from live_urls
    ) as registrations
    group by run_id

),

outcomes as (

    select
        run_id,
        count(*) filter (where outcome = 'completed') as n_completed,
        count(*) filter (where outcome = 'failed') as n_failed
    from (
        select
            run_id,
            outcome
        from attempts
        union all
        select
            run_id,
            outcome
        from research_resolved
        union all
        select
            run_id,
            outcome
        from answers_resolved
        union all
        select
            run_id,
            outcome
        from live_resolved
    ) as resolved
    group by run_id

),

final as (

    select
        run_ids.run_id,
        run_started.benchmark,
        run_started.run_source,
        run_started.dataset_name,
        run_started.dataset_uri,
        run_started.dataset_sha256,
        run_started.dataset_item_count,
        run_started.systems,
        run_started.spec,
        run_started.spec_sha256,
        run_started.seed,
        run_started.argv,
        run_started.started_at,
        finished.finished_at,
        -- a resumed run that did work after its last run_finished is running again
        case
            when
                finished.finished_at >= coalesce(run_ids.last_work_at, finished.finished_at)
                and coalesce(finished.n_shards_finished >= finished.n_shards, true)
                then 'finished'
            else 'in_progress'
        end as status,
        finished.n_shards,
        finished.n_shards_finished,
        run_started.package_version,
        run_started.git_sha,
        run_started.config_sha256,
        coalesce(registered.n_items_registered, 0) as n_items_registered,
        coalesce(outcomes.n_completed, 0) as n_completed,
        coalesce(outcomes.n_failed, 0) as n_failed,
        run_started.run_started_event_id
    from run_ids
    left join run_started on run_ids.run_id = run_started.run_id
    left join finished on run_ids.run_id = finished.run_id
    left join registered on run_ids.run_id = registered.run_id
    left join outcomes on run_ids.run_id = outcomes.run_id

)

select * from final
