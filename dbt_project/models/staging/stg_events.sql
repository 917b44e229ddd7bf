-- One row per event_id: the envelope, typed. A table, incremental by ingest batch
-- (macros/incremental_events.sql). No payload: the JSON stays once, in raw.events (issue #26:
-- at 100k verdicts this column was a 559 MB copy of it). The per-type models unpack it from
-- raw.events for the rows chosen here (macros/staged_events.sql), reading only their own event
-- type and only new batches.
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
