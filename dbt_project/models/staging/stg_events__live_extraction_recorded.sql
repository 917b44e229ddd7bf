with

source as (

    {{ staged_events('live_extraction_recorded') }}

),

parsed as (

    -- One parse per payload for the scalars and one for the JSON values (element i of
    -- json_extract_string / json_extract with a list of paths is `payload ->> path` /
    -- `payload -> path`), not one per key: the payload holds the engine's whole output text,
    -- and each `->>` keeps its own parse buffers for a whole vector of payloads
    -- (stg_events__provider_call_completed ran out of 1GB that way with thirteen).
    select
        *,
        json_extract_string(
            payload,
            [
                '$.item_id', '$.url', '$.system', '$.system_version', '$.settings.provider',
                '$.attempt', '$.outcome', '$.output_text', '$.output_bytes',
                '$.target_status_code', '$.final_url', '$.render_requested', '$.render_used',
                '$.latency_ms', '$.requests_sent', '$.error_class', '$.error_message'
            ]
        ) as field,
        json_extract(payload, ['$.settings', '$.redirect_chain', '$.source_event_ids']) as node
    from source

),

renamed as (

    select
        _load_id,
        event_id as extraction_event_id,
        run_id,
        occurred_at,
        field[1] as item_id,
        field[2] as url,
        field[3] as system,
        field[4] as system_version,
        node[1] as settings,
        coalesce(field[5], 'local:' || field[3]) as provider,
        cast(field[6] as bigint) as attempt,
        field[7] as outcome,
        field[8] as output_text,
        cast(field[9] as bigint) as output_bytes,
        cast(field[10] as bigint) as target_status_code,
        field[11] as final_url,
        node[2] as redirect_chain,
        field[12] as render_requested,
        field[13] as render_used,
        cast(field[14] as double) as latency_ms,
        cast(field[15] as bigint) as requests_sent,
        field[16] as error_class,
        field[17] as error_message,
        node[3] as source_event_ids
    from parsed

)

select * from renamed
