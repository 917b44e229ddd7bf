{%- set band = number_var('series_noise_band_points', 0) %}
-- One row per (series, lane, grader_id, run_index) of repeat-run series (methodology 3):
-- accuracy_r = correct / attempted questions of the run, failures counted as incorrect (ours;
-- missing rows of an unfinished run are out). delta_vs_previous = accuracy_r - accuracy of the
-- previous run index (NULL for the first); within_noise_band = |delta| x 100 <=
-- scoring_var('series_noise_band_points') (default 0.4 points): do not call such a difference.
-- Run order is confounded with learning by design: compare lanes at the same run index.
with

answers as (

    select * from {{ ref('int_qa_answers_scored') }}
    where series is not null

),

per_run as (

    select
        series,
        lane,
        grader_id,
        run_index,
        run_id,
        count(*) filter (where outcome != 'missing') as n_attempted,
        count(*) filter (where label = 'correct') as n_correct
    from answers
    group by series, lane, grader_id, run_index, run_id

),

final as (

    select
        series,
        lane,
        grader_id,
        run_index,
        run_id,
        case when n_attempted > 0 then cast(n_correct as double) / n_attempted end
            as strict_accuracy,
        strict_accuracy - lag(strict_accuracy) over (
            partition by series, lane, grader_id order by run_index
        ) as delta_vs_previous,
        -- rounded to 1e-9 points so a delta of exactly the band is inside it despite binary floats
        round(abs(delta_vs_previous) * 100, 9) <= {{ band }} as within_noise_band
    from per_run

)

select * from final
