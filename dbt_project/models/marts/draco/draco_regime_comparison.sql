-- One row per (imported run_id, imported judge_id, our run_id, our judge_id, lane): an imported
-- regime of a system (draco_imported_leaderboard) beside each regime of ours that judged the
-- same system on the same dataset (draco_leaderboard, e.g. its imported inference file
-- re-judged with `bench rejudge`). Side by side, never one ranking: the judges differ.
--   score_difference = ours - imported (0-1); both over every task of the dataset
--   (imported: score_mean_all_tasks; ours: score_mean, failures at 0.0).
with

imported as (

    select * from {{ ref('draco_imported_leaderboard') }}

),

ours as (

    select * from {{ ref('draco_leaderboard') }}

),

final as (

    select
        imported.lane,
        imported.dataset_sha256,
        imported.run_id as imported_run_id,
        imported.judge_id as imported_judge_id,
        imported.judge_model as imported_judge_model,
        imported.judge_label as imported_judge_label,
        imported.file_name as imported_file_name,
        imported.score_mean_all_tasks as imported_score_mean,
        imported.published_score as imported_published_score,
        imported.pass_rate_mean as imported_pass_rate_mean,
        imported.factual_accuracy_mean as imported_factual_accuracy_mean,
        ours.run_id as our_run_id,
        ours.judge_id as our_judge_id,
        ours.judge_model as our_judge_model,
        ours.judge_official as our_judge_official,
        ours.n_items as our_n_items,
        ours.n_scored as our_n_scored,
        ours.score_mean as our_score_mean,
        ours.pass_rate_mean as our_pass_rate_mean,
        ours.factual_accuracy_mean as our_factual_accuracy_mean,
        ours.score_mean - imported.score_mean_all_tasks as score_difference
    from imported
    inner join ours
        on imported.lane = ours.lane and imported.dataset_sha256 = ours.dataset_sha256

)

select * from final
