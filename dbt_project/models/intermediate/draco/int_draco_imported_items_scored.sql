-- One row per (run_id, lane, judge_id, item_id) of every item an imported grading file lists
-- (and that matched a dataset task): the mean over the file's judge runs of the run score and
-- pass rate (int_draco_imported_runs_scored; Valyu averages runs per item the same way), next
-- to the figure the file itself published for the item.
--   status 'scored' = at least one judge run; 'failed' = the file records the item without
--   runs (an error): score 0.0, as the file's own overall counts it.
--   domain = the file's domain for the item (what its domain figures group by), else the task's.
--   latency_s / cost_usd = the file's own figures for the item's report (seconds, US dollars).
with

files as (

    select * from {{ ref('stg_events__imported_file_registered') }}
    where kind = 'grading'

),

tasks as (

    select * from {{ ref('stg_events__rubric_task_registered') }}

),

figures as (

    select
        files.run_id,
        files.lane,
        files.judge_id,
        files.file_event_id,
        figure.value ->> 'item_id' as item_id,
        figure.value ->> 'domain' as file_domain,
        cast(figure.value ->> 'score' as double) as published_score,
        cast(figure.value ->> 'pass_rate' as double) as published_pass_rate,
        cast(figure.value ->> 'latency_s' as double) as latency_s,
        cast(figure.value ->> 'cost_usd' as double) as cost_usd,
        figure.value ->> 'error' as file_error,
        cast(figure.key as bigint) as file_order
    from files, json_each(files.item_figures) as figure

),

runs as (

    select
        run_id,
        lane,
        judge_id,
        item_id,
        count(*) as n_runs,
        {{ stable_avg('score', order_by='run_index') }} as score,
        {{ stable_avg('pass_rate', order_by='run_index') }} as pass_rate,
        {{ stable_avg('factual_accuracy', order_by='run_index') }} as factual_accuracy,
        flatten(list(verdict_event_ids order by run_index)) as verdict_event_ids
    from {{ ref('int_draco_imported_runs_scored') }}
    group by run_id, lane, judge_id, item_id

),

final as (

    select
        figures.run_id,
        figures.lane,
        figures.judge_id,
        figures.item_id,
        tasks.position,
        coalesce(figures.file_domain, tasks.domain) as domain,
        tasks.domain as task_domain,
        figures.file_order,
        case when runs.n_runs > 0 then 'scored' else 'failed' end as status,
        coalesce(runs.n_runs, 0) as n_runs,
        coalesce(runs.score, 0.0) as score,
        coalesce(runs.pass_rate, 0.0) as pass_rate,
        coalesce(runs.factual_accuracy, 0.0) as factual_accuracy,
        figures.published_score,
        figures.published_pass_rate,
        figures.latency_s,
        figures.cost_usd,
        figures.file_error,
        figures.file_event_id,
        tasks.task_event_id,
        coalesce(runs.verdict_event_ids, []) as verdict_event_ids
    from figures
    inner join tasks on figures.run_id = tasks.run_id and figures.item_id = tasks.item_id
    left join runs
        on figures.run_id = runs.run_id
            and figures.lane = runs.lane
            and figures.judge_id = runs.judge_id
            and figures.item_id = runs.item_id
    -- an excluded task leaves the imported regime's scores too (int_corrections_items_excluded)
    where not {{ is_excluded_item('draco', 'figures.run_id', 'figures.item_id', 'tasks.dataset_sha256') }}

)

select * from final
