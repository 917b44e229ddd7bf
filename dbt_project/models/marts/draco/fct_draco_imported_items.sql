-- One row per (run_id, lane, judge_id, item_id) of every imported grading file: our
-- recomputation of the item from the imported verdicts (int_draco_imported_items_scored) beside
-- the item figure the file published, and the difference (ours - published; NULL when the file
-- gives none). Imported regimes only: never a verdict of ours.
with

items as (

    select * from {{ ref('int_draco_imported_items_scored') }}

),

final as (

    select
        run_id,
        lane,
        judge_id,
        item_id,
        position,
        domain,
        task_domain,
        status,
        n_runs,
        score,
        published_score,
        score - published_score as score_difference,
        pass_rate,
        published_pass_rate,
        pass_rate - published_pass_rate as pass_rate_difference,
        factual_accuracy,
        latency_s,
        cost_usd,
        file_error,
        file_event_id,
        task_event_id,
        verdict_event_ids
    from items

)

select * from final
