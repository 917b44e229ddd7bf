{%- set band = number_var('series_noise_band_points', 0) %}
-- One row per (series, lane, grader_id): the per-run accuracies in run_index order, their mean,
-- min, max and range in points (x 100), beside the noise band. The runs are not independent
-- replicates (learning across runs), so no interval is given.
with

runs as (

    select * from {{ ref('fct_series_accuracy') }}

),

final as (

    select
        series,
        lane,
        grader_id,
        count(*) as n_runs,
        list(strict_accuracy order by run_index) as accuracies,
        {{ stable_avg('strict_accuracy', order_by='run_index') }} as mean_accuracy,
        min(strict_accuracy) as min_accuracy,
        max(strict_accuracy) as max_accuracy,
        (max(strict_accuracy) - min(strict_accuracy)) * 100 as range_points,
        cast({{ band }} as double) as noise_band_points
    from runs
    group by series, lane, grader_id

)

select * from final
