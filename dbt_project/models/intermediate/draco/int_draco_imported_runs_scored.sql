{%- set threshold = draco_pass_threshold() %}
-- One row per (run_id, lane, judge_id, item_id, run_index): one judge run of an imported grading
-- file scored the way the file's harness scores it (valyu-benchmarks draco/eval/rubric_eval.py
-- with the `rubric` library's PerCriterionGrader.aggregate; Nimble's judge.aggregate), i.e. per
-- run over the flat criterion list:
--   raw = sum(weight * met_rate), P = sum of positive weights,
--   score = rubric_score(raw, P) = clamp(raw / P, 0, 1) (methodology 1.3);
--   pass_rate = share of criteria passed (positive with met_rate >= var draco_pass_threshold,
--   or negative below it; Valyu's compute_pass_rate with binary verdicts).
-- factual_accuracy = the same score over the factual-accuracy section.
with

verdicts as (

    select * from {{ ref('int_draco_imported_verdicts') }}

),

summed as (

    select
        run_id,
        lane,
        judge_id,
        item_id,
        run_index,
        count(*) as n_criteria,
        count(*) filter (
            where (polarity = 'positive' and met_rate >= {{ threshold }})
            or (polarity = 'negative' and met_rate < {{ threshold }})
        ) as n_passed,
        {{ stable_sum('weight * met_rate', 'criterion_position') }} as raw_score,
        {{ stable_sum('weight', 'criterion_position', where='weight > 0') }} as positive_weight,
        {{ stable_sum('weight * met_rate', 'criterion_position', where="axis = 'factual-accuracy'") }}
            as raw_factual_accuracy,
        {{ stable_sum('weight', 'criterion_position',
            where="weight > 0 and axis = 'factual-accuracy'") }} as positive_weight_factual_accuracy,
        list(imported_verdict_event_id order by criterion_position) as verdict_event_ids
    from verdicts
    group by run_id, lane, judge_id, item_id, run_index

),

final as (

    select
        run_id,
        lane,
        judge_id,
        item_id,
        run_index,
        n_criteria,
        n_passed,
        raw_score,
        positive_weight,
        {{ rubric_score('raw_score', 'positive_weight') }} as score,
        cast(n_passed as double) / n_criteria as pass_rate,
        case
            when positive_weight_factual_accuracy is not null
                then {{ rubric_score('raw_factual_accuracy', 'positive_weight_factual_accuracy') }}
        end as factual_accuracy,
        verdict_event_ids
    from summed

)

select * from final
