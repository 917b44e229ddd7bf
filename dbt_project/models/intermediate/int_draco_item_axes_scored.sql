-- One row per (run_id, lane, judge_id, item_id, axis): the rubric score of one section
-- (methodology 1.3) over the section's criteria that have samples ("scored on what exists" for an
-- incomplete item; nothing exists for a failed or missing one, so it scores 0):
--   raw = sum(w_i * v_i), P = sum of the positive weights, score = rubric_score(raw, P), i.e.
--   clamp(raw / P, 0, 1) and 0 when P <= 0 or NULL; pass_rate = passed / judged criteria (0
--   when none is judged).
with

criteria as (

    select * from {{ ref('int_draco_criteria_scored') }}

),

summed as (

    select
        run_id,
        lane,
        judge_id,
        item_id,
        axis,
        any_value(axis_title) as axis_title,
        count(*) as n_criteria,
        count(*) filter (where judged) as n_criteria_judged,
        count(*) filter (where polarity = 'negative') as n_negative,
        count(*) filter (where passed) as n_passed,
        count(*) filter (where split) as n_split,
        cast(sum(n_flagged_samples) as bigint) as n_flagged_samples,
        {{ stable_sum('weighted_v', 'criterion_position', where='judged') }} as raw_score,
        {{ stable_sum('weight', 'criterion_position', where='judged and weight > 0') }}
            as positive_weight
    from criteria
    group by run_id, lane, judge_id, item_id, axis

),

final as (

    select
        run_id,
        lane,
        judge_id,
        item_id,
        axis,
        axis_title,
        n_criteria,
        n_criteria_judged,
        n_negative,
        n_passed,
        n_split,
        n_flagged_samples,
        coalesce(raw_score, 0.0) as raw_score,
        positive_weight,
        {{ rubric_score('raw_score', 'positive_weight') }} as score,
        case
            when n_criteria_judged > 0 then cast(n_passed as double) / n_criteria_judged else 0.0
        end as pass_rate
    from summed

)

select * from final
