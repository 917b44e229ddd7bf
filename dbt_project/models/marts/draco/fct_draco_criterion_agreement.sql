-- The agreement figures of int_draco_criterion_agreement with the weight in effect.
with

agreement as (

    select * from {{ ref('int_draco_criterion_agreement') }}

),

criteria as (

    select * from {{ ref('int_draco_criteria_weighted') }}

),

final as (

    select
        agreement.run_id,
        agreement.item_id,
        agreement.criterion_id,
        agreement.axis,
        agreement.requirement,
        agreement.polarity,
        agreement.registered_weight,
        criteria.weight,
        agreement.n_systems,
        agreement.n_judges,
        agreement.n_groups,
        agreement.n_samples,
        agreement.n_flagged_samples,
        agreement.mean_v,
        agreement.stddev_v,
        agreement.noisy_share,
        agreement.judge_disagreement_share,
        agreement.criterion_event_id
    from agreement
    inner join criteria
        on agreement.run_id = criteria.run_id
            and agreement.item_id = criteria.item_id
            and agreement.criterion_id = criteria.criterion_id

)

select * from final
