-- One row per (item_id, criterion_id) whose weight is overridden for this build (methodology
-- 1.3, rescoring without any API call): the rows of scoring_var('draco_weight_override_rows') (given
-- by `bench rescore --draco-weights FILE`) win over the draco_weight_overrides seed.
with

var_overrides as (

    {{ draco_var_override_rows_sql() }}

),

seed_overrides as (

    select
        seed.item_id,
        seed.criterion_id,
        cast(seed.weight as double) as weight,
        seed.reason
    from {{ ref('draco_weight_overrides') }} as seed
    anti join var_overrides
        on seed.item_id = var_overrides.item_id and seed.criterion_id = var_overrides.criterion_id

),

final as (

    select * from var_overrides
    union all
    select * from seed_overrides

)

select * from final
