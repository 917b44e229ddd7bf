-- One row per superseded verdict event (judge_verdict / imported_verdict / answer_graded): the
-- replacement of its LATEST verdict_superseded event (then the larger event id on a tie).
-- Resolution models score the replacement and keep both event ids.
with

events as (

    select * from {{ ref('stg_events__verdict_superseded') }}

),

final as (

    select
        superseded_event_id,
        superseded_event_type,
        replacement,
        reason,
        provenance_source,
        provenance_actor,
        occurred_at as superseded_at,
        correction_event_id
    from events
    qualify row_number() over (
            partition by superseded_event_id
            order by occurred_at desc, correction_event_id desc
        ) = 1

)

select * from final
