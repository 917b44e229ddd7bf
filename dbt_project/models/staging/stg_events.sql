-- One row per event_id. A table, incremental by ingest batch (macros/incremental_events.sql):
-- the per-type models read only their own event type and only new batches, so the payload
-- column is scanned once per batch, not once per reference.
{{ config(materialized='incremental') }}

with

source as (

    select
        *,
        {{ raw_load_id() }} as _load_id
    from {{ source('raw', 'events') }}

),

renamed as (

    select
        event_id,
        event_type,
        schema_version,
        stored_schema_version,
        run_id,
        cast(occurred_at as timestamptz) as occurred_at,
        producer,
        payload,
        content_sha256,
        prev_sha256,
        segment,
        line_no,
        _load_id
    from source
    where true {{ only_new_loads() }}
    {%- if is_incremental() %}
        and not exists (select 1 from {{ this }} as seen where seen.event_id = source.event_id)
    {%- endif %}
    -- Ingest merges insert-only on event_id; this keeps staging exact even if a raw table was
    -- appended twice. The first occurrence in log order wins (the same fact either way).
    qualify row_number() over (partition by event_id order by segment, line_no) = 1

)

select * from renamed
