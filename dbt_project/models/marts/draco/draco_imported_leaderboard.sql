-- One row per (run_id, lane, judge_id) of every imported grading file: the DRACO leaderboard row
-- of an imported regime ("imported, not judged here": the file's judge, never mixed with ours;
-- ranks only within one imported judge_id). Our recomputation from the file's verdicts stands
-- next to the file's own published figure, with the difference (recomputed - published, 0-1):
--   score_mean / pass_rate_mean = mean over the items the file lists (the file's denominator;
--   errored items at 0.0), published_* from its header (NULL when it has none, e.g. Nimble / CSV);
--   score_mean_all_tasks = our rule (methodology 1.3, flaw 5.2): every task of the dataset
--   counts, a task the file has no record for at 0.0;
--   latency_mean_s / cost_mean_usd = the file's per-item report latency and cost (imported:
--   the harness's figures), the cost averaged over the n_items_costed items that state one;
--   n_unmatched / unmatched_ids = file ids that are no task of the dataset; n_absent /
--   absent_ids = dataset tasks missing from the file; n_duplicate = ids the file repeats.
with

items as (

    select * from {{ ref('int_draco_imported_items_scored') }}

),

files as (

    select * from {{ ref('stg_events__imported_file_registered') }}
    where kind = 'grading'

),

runs as (

    select * from {{ ref('int_draco_runs') }}

),

tasks as (

    select
        run_id,
        count(*) as n_tasks
    from {{ ref('stg_events__rubric_task_registered') }}
    group by run_id

),

published as (

    select
        run_id,
        lane,
        judge_id,
        any_value(published_value) filter (where metric = 'score') as published_score,
        any_value(published_value) filter (where metric = 'pass_rate') as published_pass_rate
    from {{ ref('int_draco_imported_figures') }}
    where scope = 'overall'
    group by run_id, lane, judge_id

),

per_lane as (

    select
        run_id,
        lane,
        judge_id,
        count(*) as n_items,
        count(*) filter (where status = 'scored') as n_scored,
        count(*) filter (where status = 'failed') as n_failed,
        {{ stable_avg('score', order_by='file_order') }} as score_mean,
        {{ stable_avg('pass_rate', order_by='file_order') }} as pass_rate_mean,
        {{ stable_avg('factual_accuracy', order_by='file_order') }} as factual_accuracy_mean,
        {{ stable_sum('score', order_by='file_order') }} as score_sum,
        {{ stable_avg('latency_s', order_by='file_order') }} as latency_mean_s,
        {{ stable_avg('cost_usd', order_by='file_order', where='cost_usd is not null') }}
            as cost_mean_usd,
        count(cost_usd) as n_items_costed
    from items
    group by run_id, lane, judge_id

),

final as (

    select
        per_lane.run_id,
        runs.dataset_sha256,
        per_lane.lane,
        per_lane.judge_id,
        files.judge_model,
        files.judge_label,
        files.source_format,
        files.file_name,
        files.file_sha256,
        per_lane.n_items,
        per_lane.n_scored,
        per_lane.n_failed,
        per_lane.score_mean,
        published.published_score,
        per_lane.score_mean - published.published_score as score_difference,
        per_lane.pass_rate_mean,
        published.published_pass_rate,
        per_lane.pass_rate_mean - published.published_pass_rate as pass_rate_difference,
        per_lane.factual_accuracy_mean,
        per_lane.score_sum / tasks.n_tasks as score_mean_all_tasks,
        tasks.n_tasks,
        per_lane.latency_mean_s,
        cast(files.header ->> 'avg_latency_s' as double) as published_latency_mean_s,
        per_lane.cost_mean_usd,
        per_lane.n_items_costed,
        cast(files.header ->> 'runs_per_item' as bigint) as published_runs_per_item,
        cast(files.header ->> 'n_items' as bigint) as published_n_items,
        len(files.unmatched_ids) as n_unmatched,
        files.unmatched_ids,
        len(files.absent_ids) as n_absent,
        files.absent_ids,
        len(files.duplicate_ids) as n_duplicate,
        rank() over (partition by per_lane.judge_id order by per_lane.score_mean desc)
            as rank_score,
        runs.run_started_event_id,
        files.file_event_id
    from per_lane
    inner join runs on per_lane.run_id = runs.run_id
    inner join files
        on per_lane.run_id = files.run_id
            and per_lane.lane = files.lane
            and per_lane.judge_id = files.judge_id
    inner join tasks on per_lane.run_id = tasks.run_id
    left join published
        on per_lane.run_id = published.run_id
            and per_lane.lane = published.lane
            and per_lane.judge_id = published.judge_id

)

select * from final
