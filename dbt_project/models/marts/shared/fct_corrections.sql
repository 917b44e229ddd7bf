-- One row per correction event (item_excluded, verdict_superseded): what was corrected, why,
-- by whom and how (provenance), and whether it is in effect now (a later event on the same
-- target decides: a reinstatement, or a newer supersession).
with

exclusions as (

    select
        events.correction_event_id,
        'item_excluded' as correction_type,
        events.occurred_at,
        events.family,
        events.item_id as target,
        events.dataset_sha256,
        events.scope_run_id,
        case when events.excluded then 'excluded' else 'reinstated' end as action,
        events.reason,
        events.provenance_source,
        events.provenance_actor,
        events.provenance_file_name,
        events.provenance_file_sha256,
        events.excluded and active.correction_event_id is not null as in_effect
    from {{ ref('stg_events__item_excluded') }} as events
    left join {{ ref('int_corrections_items_excluded') }} as active
        on events.correction_event_id = active.correction_event_id

),

supersessions as (

    select
        events.correction_event_id,
        'verdict_superseded' as correction_type,
        events.occurred_at,
        case when events.superseded_event_type = 'answer_graded' then 'qa' else 'draco' end as family,
        events.superseded_event_id as target,
        cast(null as varchar) as dataset_sha256,
        events.run_id as scope_run_id,
        'replaced by ' || events.replacement as action,
        events.reason,
        events.provenance_source,
        events.provenance_actor,
        events.provenance_file_name,
        events.provenance_file_sha256,
        active.correction_event_id is not null as in_effect
    from {{ ref('stg_events__verdict_superseded') }} as events
    left join {{ ref('int_corrections_verdicts_superseded') }} as active
        on events.correction_event_id = active.correction_event_id

),

final as (

    select * from exclusions
    union all
    select * from supersessions

)

select * from final
