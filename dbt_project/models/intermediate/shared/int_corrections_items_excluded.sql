-- One row per (family, dataset_sha256, item_id, scope) whose LATEST item_excluded event
-- excludes it (a later excluded = false reinstates; then the larger event id on a tie).
-- scope_run_id NULL = every run of the family over that dataset. Every family's grid filters
-- on it through the macro is_excluded_item (macros/corrections.sql).
with

events as (

    select * from {{ ref('stg_events__item_excluded') }}

),

latest as (

    select * from events
    qualify row_number() over (
            partition by family, dataset_sha256, item_id, coalesce(scope_run_id, '*')
            order by occurred_at desc, correction_event_id desc
        ) = 1

),

final as (

    select
        family,
        dataset_sha256,
        item_id,
        scope_run_id,
        reason,
        provenance_source,
        provenance_actor,
        occurred_at as excluded_at,
        correction_event_id
    from latest
    where excluded

)

select * from final
