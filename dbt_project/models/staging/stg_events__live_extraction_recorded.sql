with

source as (

    {{ staged_events('live_extraction_recorded') }}

),

renamed as (

    select
        _load_id,
        event_id as extraction_event_id,
        run_id,
        occurred_at,
        payload ->> 'item_id' as item_id,
        payload ->> 'url' as url,
        payload ->> 'system' as system,
        payload ->> 'system_version' as system_version,
        payload -> 'settings' as settings,
        coalesce(payload ->> '$.settings.provider', 'local:' || (payload ->> 'system')) as provider,
        cast(payload ->> 'attempt' as bigint) as attempt,
        payload ->> 'outcome' as outcome,
        payload ->> 'output_text' as output_text,
        cast(payload ->> 'output_bytes' as bigint) as output_bytes,
        cast(payload ->> 'target_status_code' as bigint) as target_status_code,
        payload ->> 'final_url' as final_url,
        payload -> 'redirect_chain' as redirect_chain,
        payload ->> 'render_requested' as render_requested,
        payload ->> 'render_used' as render_used,
        cast(payload ->> 'latency_ms' as double) as latency_ms,
        cast(payload ->> 'requests_sent' as bigint) as requests_sent,
        payload ->> 'error_class' as error_class,
        payload ->> 'error_message' as error_message,
        payload -> 'source_event_ids' as source_event_ids
    from source

)

select * from renamed
