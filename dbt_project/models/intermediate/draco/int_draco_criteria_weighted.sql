-- One row per (run_id, item_id, criterion_id) of every deep-research run: the registered
-- criterion with the weight in effect (methodology 1.3, rescoring without any API call):
--   1. an override row of scoring_var('draco_weight_override_rows') (bench rescore --draco-weights),
--      else the draco_weight_overrides seed (item_id, criterion_id, weight, reason), else the
--      registered weight;
--   2. then, when scoring_var('draco_penalty_floor') is not null, a negative weight below the floor is
--      raised to it (floor -100: -500 -> -100).
-- Polarity is ALWAYS the registered one (it is what the judge was asked about: for a negative
-- criterion MET means "the report commits the error"), whatever the weight in effect. So an
-- override may change a weight's size or set it to 0, but never its sign: a penalty turned
-- positive would EARN points for a committed error (and a positive criterion turned negative
-- would penalise a requirement met). The data test
-- draco_weight_override_keeps_the_registered_sign (int_draco_criteria_weighted.yml) fails the build
-- when an override flips the sign, i.e. unless weight = 0 or (weight < 0) = (polarity =
-- 'negative'); the failing rows are the criteria where that is false.
with

criteria as (

    select * from {{ ref('int_draco_criteria_registered') }}

),

overrides as (

    select * from {{ ref('int_draco_weight_overrides') }}

),

final as (

    select
        criteria.run_id,
        criteria.item_id,
        criteria.criterion_id,
        criteria.axis,
        criteria.axis_title,
        criteria.criterion_position,
        criteria.requirement,
        criteria.polarity,
        criteria.registered_weight,
        {{ draco_weight_in_effect('criteria.registered_weight', 'overrides.weight') }} as weight,
        overrides.weight is not null as is_overridden,
        overrides.reason as override_reason,
        {{ draco_penalty_floor_sql() }} as penalty_floor,
        {{ draco_weight_floored('criteria.registered_weight', 'overrides.weight') }} as is_floored,
        criteria.criterion_event_id
    from criteria
    left join overrides
        on criteria.item_id = overrides.item_id and criteria.criterion_id = overrides.criterion_id

)

select * from final
