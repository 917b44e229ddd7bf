-- One row per (run_id, item_id, criterion_id) of a DRACO-family run: the criterion as
-- registered, with its polarity (the sign of the registered weight). Reads no scoring var.
with

runs as (

    select * from {{ ref('int_draco_runs') }}

),

criteria as (

    select criteria.*
    from {{ ref('stg_events__rubric_criterion_registered') }} as criteria
    inner join runs on criteria.run_id = runs.run_id

),

final as (

    select
        run_id,
        item_id,
        criterion_id,
        axis,
        axis_title,
        criterion_position,
        requirement,
        case when registered_weight < 0 then 'negative' else 'positive' end as polarity,
        registered_weight,
        criterion_event_id
    from criteria

)

select * from final
