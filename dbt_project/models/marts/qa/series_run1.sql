-- One row per (series, lane, grader_id, vertical): the run-1-only view for one-shot workloads
-- (methodology 3): accuracy at run index 1, ranked only among lanes of the same kind
-- (answer lanes never share a rank with synthesised lanes) and vertical; beside it the last
-- run's accuracy and the change from run 1, which is learning + noise and cannot be separated
-- (the order confound, stated in `order_confound`). Compare lanes at the same run index.
with

runs as (

    select * from {{ ref('fct_series_vertical_accuracy') }}

),

first_and_last as (

    select
        series,
        lane,
        lane_kind,
        grader_id,
        vertical,
        count(*) as n_runs,
        any_value(strict_accuracy) filter (where run_index = 1) as run1_accuracy,
        any_value(n_attempted) filter (where run_index = 1) as run1_n_attempted,
        arg_max(strict_accuracy, run_index) as last_accuracy,
        max(run_index) as last_run_index,
        any_value(noise_band_points) as noise_band_points
    from runs
    group by series, lane, lane_kind, grader_id, vertical

),

final as (

    select
        *,
        rank() over (
            partition by series, lane_kind, grader_id, vertical order by run1_accuracy desc
        ) as run1_rank,
        last_accuracy - run1_accuracy as change_since_run1,
        round(abs(last_accuracy - run1_accuracy) * 100, 9) <= noise_band_points
            as change_within_noise_band,
        'run order is confounded with learning: a change since run 1 is learning + noise and '
        || 'cannot be separated; the runs are not independent replicates' as order_confound
    from first_and_last

)

select * from final
