-- One row per (dataset_sha256, item_id): a rubric task as registered, deduplicated across the runs
-- that registered it (the first registration in log time gives the attributes; every
-- registration is listed). Criterion counts and weight sums are over the registered weights (the
-- dataset as published); dim_rubric_criteria has the weights in effect.
with

tasks as (

    select * from {{ ref('stg_events__rubric_task_registered') }}

),

criteria as (

    select * from {{ ref('stg_events__rubric_criterion_registered') }}

),

first_registration as (

    select * from tasks
    qualify row_number() over (
            partition by dataset_sha256, item_id order by occurred_at, task_event_id
        ) = 1

),

registrations as (

    select
        dataset_sha256,
        item_id,
        count(distinct run_id) as n_runs,
        list_sort(list(task_event_id)) as task_event_ids
    from tasks
    group by dataset_sha256, item_id

),

-- the criteria registered by the first registering run (other runs register the same rubric)
rubric as (

    select
        first_registration.dataset_sha256,
        first_registration.item_id,
        count(*) as n_criteria,
        count(*) filter (where criteria.registered_weight > 0) as n_positive,
        count(*) filter (where criteria.registered_weight < 0) as n_negative,
        count(distinct criteria.axis) as n_axes,
        cast(
            coalesce(sum(criteria.registered_weight) filter (where criteria.registered_weight > 0), 0)
            as bigint
        ) as positive_weight,
        cast(
            coalesce(sum(criteria.registered_weight) filter (where criteria.registered_weight < 0), 0)
            as bigint
        ) as negative_weight,
        min(criteria.registered_weight) as min_weight,
        max(criteria.registered_weight) as max_weight
    from first_registration
    inner join criteria
        on first_registration.run_id = criteria.run_id
            and first_registration.item_id = criteria.item_id
    group by first_registration.dataset_sha256, first_registration.item_id

),

final as (

    select
        first_registration.dataset_sha256,
        first_registration.item_id,
        first_registration.position,
        first_registration.domain,
        first_registration.rubric_id,
        first_registration.problem,
        first_registration.criteria_count,
        coalesce(rubric.n_criteria, 0) as n_criteria,
        coalesce(rubric.n_positive, 0) as n_positive,
        coalesce(rubric.n_negative, 0) as n_negative,
        coalesce(rubric.n_axes, 0) as n_axes,
        coalesce(rubric.positive_weight, 0) as positive_weight,
        coalesce(rubric.negative_weight, 0) as negative_weight,
        rubric.min_weight,
        rubric.max_weight,
        registrations.n_runs,
        first_registration.task_event_id as first_task_event_id,
        registrations.task_event_ids
    from first_registration
    inner join registrations
        on first_registration.dataset_sha256 = registrations.dataset_sha256
            and first_registration.item_id = registrations.item_id
    left join rubric
        on first_registration.dataset_sha256 = rubric.dataset_sha256
            and first_registration.item_id = rubric.item_id

)

select * from final
