-- One row per report_normalized event, i.e. per (run_id, lane, item_id, attempt, normalizer_version).
with

source as (

    {{ staged_events('report_normalized') }}

),

parsed as (

    -- One parse per payload for the scalars and one for the JSON values, as in
    -- stg_events__extraction_completed: each `payload ->> 'key'` parses the whole document
    -- again with its own unspillable buffer for a whole vector of payloads, and a vector of
    -- reports (8-20 kB each, several copies per event) made the 1M-verdict full build run out
    -- of its 3GB here (benchmarks/scale.py). json_extract_string(payload, [paths])[i] is
    -- `payload ->> path`, json_extract(payload, [paths])[i] is `payload -> path`.
    select
        *,
        json_extract_string(
            payload,
            [
                '$.lane', '$.item_id', '$.attempt', '$.normalizer_version', '$.source_event_id',
                '$.raw_output_sha256', '$.stripped_bibliography', '$.strip_heading',
                '$.stripped_text', '$.judged_text'
            ]
        ) as field,
        json_extract(payload, ['$.bibliography']) as node
    from source

),

renamed as (

    select
        _load_id,
        event_id as report_event_id,
        run_id,
        occurred_at,
        field[1] as lane,
        field[2] as item_id,
        cast(field[3] as bigint) as attempt,
        field[4] as normalizer_version,
        field[5] as source_event_id,
        field[6] as raw_output_sha256,
        cast(field[7] as boolean) as stripped_bibliography,
        field[8] as strip_heading,
        field[9] as stripped_text,
        node[1] as bibliography,
        json_array_length(coalesce(node[1], '[]')) as n_bibliography,
        field[10] as judged_text
    from parsed

)

select * from renamed
