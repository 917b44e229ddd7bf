{%- set band = number_var('series_noise_band_points', 0) %}
-- One row per (series, lane, grader_id, run_index, vertical) of repeat-run series (methodology 3):
-- the per-vertical curve. vertical = the question's topic / vertical column ('(none)' when the
-- set has none), plus one row per run with vertical '(all)' (= fct_series_accuracy). Same rule
-- as fct_series_accuracy: accuracy_r = correct / attempted (failures count as incorrect);
-- delta_vs_previous against the previous run index of the same vertical; within_noise_band =
-- |delta| x 100 <= scoring_var('series_noise_band_points'). lane_kind keeps answer lanes
-- ('vendor_answer') apart from synthesised ones. Mean URL metrics score the answer lanes'
-- citations like any lane's chunks. Run order is confounded with learning by design.
with

answers as (

    select
        answers.*,
        kinds.lane_kind,
        coalesce(answers.topic, '(none)') as vertical
    from {{ ref('int_qa_answers_scored') }} as answers
    inner join {{ ref('int_qa_lane_kinds') }} as kinds
        on answers.run_id = kinds.run_id and answers.lane = kinds.lane
    where answers.series is not null

),

by_vertical as (

    select
        series, lane, lane_kind, grader_id, run_index, run_id, vertical,
        count(*) filter (where outcome != 'missing') as n_attempted,
        count(*) filter (where label = 'correct') as n_correct,
        {{ stable_avg('ndcg_10', order_by='item_id') }} as ndcg_10_mean
    from answers
    group by series, lane, lane_kind, grader_id, run_index, run_id, vertical
    union all
    select
        series, lane, lane_kind, grader_id, run_index, run_id, '(all)' as vertical,
        count(*) filter (where outcome != 'missing') as n_attempted,
        count(*) filter (where label = 'correct') as n_correct,
        {{ stable_avg('ndcg_10', order_by='item_id') }} as ndcg_10_mean
    from answers
    group by series, lane, lane_kind, grader_id, run_index, run_id

),

final as (

    select
        series,
        lane,
        lane_kind,
        grader_id,
        vertical,
        run_index,
        run_id,
        n_attempted,
        n_correct,
        case when n_attempted > 0 then cast(n_correct as double) / n_attempted end
            as strict_accuracy,
        strict_accuracy - lag(strict_accuracy) over (
            partition by series, lane, grader_id, vertical order by run_index
        ) as delta_vs_previous,
        round(abs(delta_vs_previous) * 100, 9) <= {{ band }} as within_noise_band,
        cast({{ band }} as double) as noise_band_points,
        ndcg_10_mean
    from by_vertical

)

select * from final
