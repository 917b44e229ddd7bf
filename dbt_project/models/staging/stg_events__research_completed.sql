-- One row per research_completed event, i.e. per (run_id, lane, item_id, attempt).
with

source as (

    {{ staged_events('research_completed') }}

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
                '$.lane', '$.provider', '$.item_id', '$.attempt', '$.vendor_run_id',
                '$.raw_output', '$.instruction_sha256', '$.submitted_at', '$.finished_at',
                '$.queue_ms', '$.wall_clock_ms', '$.poll_interval_s', '$.polls', '$.cost_usd',
                '$.cost_basis'
            ]
        ) as field,
        json_extract(payload, ['$.raw_citations', '$.usage', '$.source_event_ids']) as node
    from source

),

renamed as (

    select
        _load_id,
        event_id as research_event_id,
        run_id,
        occurred_at,
        field[1] as lane,
        field[2] as provider,
        field[3] as item_id,
        cast(field[4] as bigint) as attempt,
        field[5] as vendor_run_id,
        field[6] as raw_output,
        node[1] as raw_citations,
        json_array_length(coalesce(node[1], '[]')) as n_raw_citations,
        field[7] as instruction_sha256,
        cast(field[8] as timestamptz) as submitted_at,
        cast(field[9] as timestamptz) as finished_at,
        cast(field[10] as double) as queue_ms,
        cast(field[11] as double) as wall_clock_ms,
        cast(field[12] as double) as poll_interval_s,
        cast(field[13] as bigint) as polls,
        cast(field[14] as double) as cost_usd,
        field[15] as cost_basis,
        node[2] as usage,
        cast(coalesce(node[3], '[]') as varchar[]) as source_event_ids
    from parsed

)

select * from renamed
