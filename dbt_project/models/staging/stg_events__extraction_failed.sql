with

source as (

    {{ staged_events('extraction_failed') }}

),

renamed as (

    select
        _load_id,
        event_id as extraction_event_id,
        run_id,
        occurred_at,
        payload ->> 'item_id' as item_id,
        payload ->> 'system' as system,
        payload ->> 'system_version' as system_version,
        payload -> 'settings' as settings,
        cast(payload ->> 'attempt' as bigint) as attempt,
        payload ->> 'error_class' as error_class,
        payload ->> 'error_message' as error_message,
        cast(payload ->> 'latency_ms' as double) as latency_ms,
        content_sha256 as extraction_content_sha256
    from source

)

select * from renamed
