with

source as (

    {{ staged_events('item_registered') }}

),

parsed as (

    -- One parse per payload, not one per key: a vector of these payloads carries every
    -- ground-truth text of a dataset, and each `payload ->> 'key'` holds its own unspillable
    -- parse buffer for it (see stg_events__extraction_completed).
    select
        *,
        json_extract_string(
            payload,
            [
                '$.item_id', '$.dataset_sha256', '$.position', '$.url', '$.vertical',
                '$.ground_truth_text', '$.anchor_rule_version', '$.input_sha256',
                '$.input_bytes'
            ]
        ) as field
    from source

),

renamed as (

    select
        _load_id,
        event_id as item_event_id,
        run_id,
        occurred_at as registered_at,
        field[1] as item_id,
        field[2] as dataset_sha256,
        cast(field[3] as bigint) as position,
        field[4] as url,
        field[5] as vertical,
        field[6] as ground_truth_text,
        from_json(payload -> 'anchors', '["VARCHAR"]') as anchors,
        field[7] as anchor_rule_version,
        field[8] as input_sha256,
        cast(field[9] as bigint) as input_bytes,
        content_sha256 as item_content_sha256
    from parsed

)

select * from renamed
