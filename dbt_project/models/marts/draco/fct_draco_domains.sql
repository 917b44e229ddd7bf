-- One row per (run_id, lane, judge_id, domain): item counts and mean scores over the domain's
-- items (failed and missing at 0.0, as in draco_leaderboard). Scores are fractions 0-1.
with

items as (

    select * from {{ ref('int_draco_items_scored') }}

),

final as (

    select
        run_id,
        lane,
        judge_id,
        domain,
        count(*) as n_items,
        count(*) filter (where status = 'scored') as n_scored,
        count(*) filter (where status = 'incomplete') as n_incomplete,
        count(*) filter (where status = 'failed') as n_failed,
        count(*) filter (where status = 'missing') as n_missing,
        {{ stable_avg('score', order_by='position, item_id') }} as score_mean,
        {{ stable_avg('score_factual_accuracy', order_by='position, item_id') }}
            as factual_accuracy_mean,
        {{ stable_avg('pass_rate', order_by='position, item_id') }} as pass_rate_mean,
        list_sort(list(task_event_id)) as task_event_ids
    from items
    group by run_id, lane, judge_id, domain

)

select * from final
