{{ config(severity='warn') }}

-- A rubric criterion whose weight is not an integer within the collectors' bound (±10000,
-- warehouse/events.py MAX_RUBRIC_WEIGHT). stg_events__rubric_criterion_registered leaves it
-- out so the rest of the warehouse builds; this lists each such row, loudly.
select
    event_id as criterion_event_id,
    run_id,
    payload ->> 'item_id' as item_id,
    payload ->> 'criterion_id' as criterion_id,
    payload ->> 'weight' as weight_as_logged
from ({{ staged_events('rubric_criterion_registered', new_only=false) }}) as criteria
where
    not coalesce(
        abs(try_cast(payload ->> 'weight' as double)) <= 10000
        and try_cast(payload ->> 'weight' as bigint) is not null,
        false
    )
