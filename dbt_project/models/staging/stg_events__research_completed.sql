-- One row per research_completed event, i.e. per (run_id, lane, item_id, attempt).
with

source as (

    {{ staged_events('research_completed') }}

),

renamed as (

    select
        _load_id,
        event_id as research_event_id,
        run_id,
        occurred_at,
        payload ->> 'lane' as lane,
        payload ->> 'provider' as provider,
        payload ->> 'item_id' as item_id,
        cast(payload ->> 'attempt' as bigint) as attempt,
        payload ->> 'vendor_run_id' as vendor_run_id,
        payload ->> 'raw_output' as raw_output,
        payload -> 'raw_citations' as raw_citations,
        json_array_length(coalesce(payload -> 'raw_citations', '[]')) as n_raw_citations,
        payload ->> 'instruction_sha256' as instruction_sha256,
        cast(payload ->> 'submitted_at' as timestamptz) as submitted_at,
        cast(payload ->> 'finished_at' as timestamptz) as finished_at,
        cast(payload ->> 'queue_ms' as double) as queue_ms,
        cast(payload ->> 'wall_clock_ms' as double) as wall_clock_ms,
        cast(payload ->> 'poll_interval_s' as double) as poll_interval_s,
        cast(payload ->> 'polls' as bigint) as polls,
        cast(payload ->> 'cost_usd' as double) as cost_usd,
        payload ->> 'cost_basis' as cost_basis,
        payload -> 'usage' as usage,
        cast(coalesce(payload -> 'source_event_ids', '[]') as varchar[]) as source_event_ids
    from source

)

select * from renamed
