-- One row per (run_id, lane, item_id) of every QA run: registered questions x lanes, with the
-- resolved events of each stage.
--   * search: the latest attempt (then the later event, then the larger event id) among the
--     search calls, completed or failed; auth rejections (error_class 'auth', HTTP 401/402/403)
--     are ignored: the lane was aborted and the unit retried as a new attempt.
--   * answer: the latest attempt of answer_synthesized; its outcome is the row's outcome
--     ('missing' when the unit has no answer yet). landed = the request landed: answered,
--     zero_results, refused or rejected; failed and missing rows did not.
--   * chunks: the chunks_normalized event of the resolved search's attempt (derived stages are
--     bound to the event they derive from, never mixed across attempts); relevance_judge_id is
--     the run's UMBRELA judge (null: the run judges no relevance) that grades those chunks.
--   * latency: the search call's round trip as we timed it (latency_source 'measured'); an
--     imported row, whose call we never timed, carries the file's own per-row latency instead
--     (int_qa_imported_figures, latency_source 'imported'); null when neither exists.
--   * cost: only an imported row states one (our runs price a lane per 1k in qa_leaderboard):
--     the file's own per-row cost_usd, cost_basis 'imported'; null otherwise.
with

questions as (

    select * from {{ ref('stg_events__question_registered') }}

),

runs as (

    select * from {{ ref('int_qa_runs') }}

),

lanes as (

    select * from {{ ref('int_qa_run_lanes') }}

),

search_calls as (

    select
        run_id,
        lane,
        item_id,
        attempt,
        occurred_at,
        call_event_id,
        provider,
        status_code,
        cast(null as varchar) as error_class,
        queue_wait_ms,
        round_trip_ms,
        whole_call_ms,
        true as call_completed
    from {{ ref('stg_events__provider_call_completed') }}
    where stage = 'search'
    union all
    select
        run_id,
        lane,
        item_id,
        attempt,
        occurred_at,
        call_event_id,
        provider,
        status_code,
        error_class,
        queue_wait_ms,
        round_trip_ms,
        whole_call_ms,
        false as call_completed
    from {{ ref('stg_events__provider_call_failed') }}
    where stage = 'search'

),

search_resolved as (

    select
        *,
        case
            when call_completed and status_code between 200 and 299 then 'usable'
            when status_code in (400, 422) or error_class = 'rejected' then 'rejected'
            else 'failed'
        end as search_class
    from search_calls
    where coalesce(error_class, '') != 'auth' and coalesce(status_code, 0) not in (401, 402, 403)
    qualify row_number() over (
            partition by run_id, lane, item_id
            order by attempt desc, occurred_at desc, call_event_id desc
        ) = 1

),

chunk_events as (

    select distinct
        chunks_event_id,
        run_id,
        lane,
        item_id,
        attempt,
        occurred_at,
        n_chunks
    from {{ ref('stg_events__chunks_normalized') }}

),

imported_figures as (

    select * from {{ ref('int_qa_imported_figures') }}

),

answers_resolved as (

    select * from {{ ref('stg_events__answer_synthesized') }}
    qualify row_number() over (
            partition by run_id, lane, item_id
            order by attempt desc, occurred_at desc, answer_event_id desc
        ) = 1

),

grid as (

    select
        questions.run_id,
        lanes.lane,
        questions.item_id,
        lanes.has_search,
        runs.benchmark,
        runs.series,
        runs.run_index,
        runs.judge_id as relevance_judge_id,
        coalesce(questions.dataset_sha256, runs.dataset_sha256) as dataset_sha256,
        questions.row_position,
        questions.sample_order,
        questions.topic,
        questions.answer_type,
        questions.problem,
        questions.gold_answer,
        questions.question_event_id
    from questions
    inner join runs on questions.run_id = runs.run_id
    inner join lanes on questions.run_id = lanes.run_id
    -- an excluded question (item_excluded, int_corrections_items_excluded) leaves every score
    where not {{ is_excluded_item(
        'qa', 'questions.run_id', 'questions.item_id',
        'coalesce(questions.dataset_sha256, runs.dataset_sha256)') }}

),

chunks_resolved as (

    select chunk_events.*
    from chunk_events
    inner join search_resolved
        on chunk_events.run_id = search_resolved.run_id
            and chunk_events.lane = search_resolved.lane
            and chunk_events.item_id = search_resolved.item_id
            and chunk_events.attempt = search_resolved.attempt
    qualify row_number() over (
            partition by chunk_events.run_id, chunk_events.lane, chunk_events.item_id
            order by chunk_events.occurred_at desc, chunk_events.chunks_event_id desc
        ) = 1

),

final as (

    select
        grid.*,
        answers_resolved.attempt,
        coalesce(answers_resolved.outcome, 'missing') as outcome,
        coalesce(
            answers_resolved.outcome in ('answered', 'zero_results', 'refused', 'rejected'), false
        ) as landed,
        answers_resolved.answer,
        answers_resolved.answer_event_id,
        search_resolved.call_event_id as search_event_id,
        search_resolved.attempt as search_attempt,
        search_resolved.search_class,
        search_resolved.status_code as search_status_code,
        search_resolved.queue_wait_ms,
        coalesce(search_resolved.round_trip_ms, imported_figures.latency_ms) as round_trip_ms,
        case
            when search_resolved.round_trip_ms is not null then 'measured'
            when imported_figures.latency_ms is not null then 'imported'
        end as latency_source,
        imported_figures.cost_usd,
        case when imported_figures.cost_usd is not null then 'imported' end as cost_basis,
        search_resolved.whole_call_ms,
        chunks_resolved.chunks_event_id,
        chunks_resolved.n_chunks
    from grid
    left join answers_resolved
        on grid.run_id = answers_resolved.run_id
            and grid.lane = answers_resolved.lane
            and grid.item_id = answers_resolved.item_id
    left join search_resolved
        on grid.run_id = search_resolved.run_id
            and grid.lane = search_resolved.lane
            and grid.item_id = search_resolved.item_id
    left join chunks_resolved
        on grid.run_id = chunks_resolved.run_id
            and grid.lane = chunks_resolved.lane
            and grid.item_id = chunks_resolved.item_id
    left join imported_figures
        on grid.run_id = imported_figures.run_id
            and grid.lane = imported_figures.lane
            and grid.item_id = imported_figures.item_id

)

select * from final
