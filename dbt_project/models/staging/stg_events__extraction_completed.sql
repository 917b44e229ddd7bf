with

source as (

    select * from {{ ref('stg_events') }}
    where event_type = 'extraction_completed'{{ only_new_loads() }}

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
        payload ->> 'source' as extraction_source,
        payload ->> 'render_path' as render_path,
        payload ->> 'input_sha256' as input_sha256,
        payload ->> 'output_text' as output_text,
        cast(payload ->> 'output_bytes' as bigint) as output_bytes,
        cast(payload ->> 'latency_ms' as double) as latency_ms,
        content_sha256 as extraction_content_sha256
    from source

)

select * from renamed
