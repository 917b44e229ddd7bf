-- One row per rubric_criterion_registered event, i.e. per (run_id, item_id, criterion_id).
with

source as (

    select staged.* from ({{ staged_events('rubric_criterion_registered') }}) as staged
    where
        -- Defensive: a weight outside the collectors' bound (warehouse/events.py
        -- MAX_RUBRIC_WEIGHT; an event written before the bound existed) would overflow every
        -- sum downstream. Only its own row is left out, loudly: the data test
        -- assert_rubric_weights_in_range lists it until an `item_excluded` correction.
        abs(try_cast(staged.payload ->> 'weight' as double)) <= 10000
        and try_cast(staged.payload ->> 'weight' as bigint) is not null

),

renamed as (

    select
        _load_id,
        event_id as criterion_event_id,
        run_id,
        occurred_at,
        payload ->> 'item_id' as item_id,
        payload ->> 'criterion_id' as criterion_id,
        payload ->> 'axis' as axis,
        payload ->> 'axis_title' as axis_title,
        cast(payload ->> 'position' as bigint) as criterion_position,
        cast(payload ->> 'weight' as bigint) as registered_weight,
        payload ->> 'requirement' as requirement
    from source

)

select * from renamed
