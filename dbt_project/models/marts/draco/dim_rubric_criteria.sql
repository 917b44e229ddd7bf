-- One row per (dataset_sha256, item_id, criterion_id): a rubric criterion as registered,
-- deduplicated across runs (the first registration in log time gives the attributes; every
-- registration is listed), with the weight in effect for this build (int_draco_weight_overrides:
-- var rows, then the seed; then var draco_penalty_floor; same rule as int_draco_criteria_weighted).
with

tasks as (

    select * from {{ ref('stg_events__rubric_task_registered') }}

),

criteria as (

    select
        tasks.dataset_sha256,
        tasks.domain,
        tasks.rubric_id,
        criteria.*
    from {{ ref('stg_events__rubric_criterion_registered') }} as criteria
    inner join tasks on criteria.run_id = tasks.run_id and criteria.item_id = tasks.item_id

),

overrides as (

    select * from {{ ref('int_draco_weight_overrides') }}

),

first_registration as (

    select * from criteria
    qualify row_number() over (
            partition by dataset_sha256, item_id, criterion_id
            order by occurred_at, criterion_event_id
        ) = 1

),

registrations as (

    select
        dataset_sha256,
        item_id,
        criterion_id,
        count(distinct run_id) as n_runs,
        list_sort(list(criterion_event_id)) as criterion_event_ids
    from criteria
    group by dataset_sha256, item_id, criterion_id

),

final as (

    select
        first_registration.dataset_sha256,
        first_registration.item_id,
        first_registration.criterion_id,
        first_registration.domain,
        first_registration.rubric_id,
        first_registration.axis,
        first_registration.axis_title,
        first_registration.criterion_position,
        first_registration.requirement,
        case when first_registration.registered_weight < 0 then 'negative' else 'positive' end as polarity,
        first_registration.registered_weight,
        {{ draco_weight_in_effect('first_registration.registered_weight', 'overrides.weight') }} as weight,
        overrides.weight is not null as is_overridden,
        overrides.reason as override_reason,
        {{ draco_penalty_floor_sql() }} as penalty_floor,
        {{ draco_weight_floored('first_registration.registered_weight', 'overrides.weight') }} as is_floored,
        registrations.n_runs,
        first_registration.criterion_event_id as first_criterion_event_id,
        registrations.criterion_event_ids
    from first_registration
    inner join registrations
        on first_registration.dataset_sha256 = registrations.dataset_sha256
            and first_registration.item_id = registrations.item_id
            and first_registration.criterion_id = registrations.criterion_id
    left join overrides
        on first_registration.item_id = overrides.item_id
            and first_registration.criterion_id = overrides.criterion_id

)

select * from final
