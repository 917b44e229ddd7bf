-- One row per research_failed event, i.e. per (run_id, lane, item_id, attempt).
with

source as (

    {{ staged_events('research_failed') }}

),

renamed as (

    select
        _load_id,
        event_id as research_failed_event_id,
        run_id,
        occurred_at,
        payload ->> 'lane' as lane,
        payload ->> 'provider' as provider,
        payload ->> 'item_id' as item_id,
        cast(payload ->> 'attempt' as bigint) as attempt,
        payload ->> 'vendor_run_id' as vendor_run_id,
        payload ->> 'stage' as stage,
        payload ->> 'error_class' as error_class,
        payload ->> 'error_message' as error_message,
        cast(payload ->> 'wall_clock_ms' as double) as wall_clock_ms,
        cast(coalesce(payload -> 'source_event_ids', '[]') as varchar[]) as source_event_ids
    from source

)

select * from renamed
