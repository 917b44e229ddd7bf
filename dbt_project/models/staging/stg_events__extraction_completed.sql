with

source as (

    {{ staged_events('extraction_completed') }}

),

parsed as (

    -- One parse per payload (issue #26). Each `payload ->> 'key'` parses the whole document
    -- again, and each keeps its own parse buffer, sized for a whole vector of payloads and not
    -- spillable. raw.events holds a run's extraction_completed events side by side (one ingest
    -- batch), so one vector carries every output_text of the run: eleven separate extractions
    -- of the test fixture's 568 events (3.2 MB of payload) failed at a 150 MB memory limit with
    -- 2 threads and passed at 200 MB; this list plus `settings` passes at 60 MB.
    -- json_extract_string(payload, [paths])[i] is `payload ->> path` element for element (SQL
    -- NULL for a JSON null or a missing key).
    select
        *,
        json_extract_string(
            payload,
            [
                '$.item_id', '$.system', '$.system_version', '$.attempt', '$.source',
                '$.render_path', '$.input_sha256', '$.output_text', '$.output_bytes',
                '$.latency_ms'
            ]
        ) as field
    from source

),

renamed as (

    select
        _load_id,
        event_id as extraction_event_id,
        run_id,
        occurred_at,
        field[1] as item_id,
        field[2] as system,
        field[3] as system_version,
        payload -> 'settings' as settings,
        cast(field[4] as bigint) as attempt,
        field[5] as extraction_source,
        field[6] as render_path,
        field[7] as input_sha256,
        field[8] as output_text,
        cast(field[9] as bigint) as output_bytes,
        cast(field[10] as double) as latency_ms,
        content_sha256 as extraction_content_sha256
    from parsed

)

select * from renamed
