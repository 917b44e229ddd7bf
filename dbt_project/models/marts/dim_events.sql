-- One row per event: the envelope and payload, for lineage. Appended to, never rebuilt
-- (macros/incremental_events.sql): a build copies only the events it has not seen. The payload
-- comes from raw.events (macros/staged_events.sql): staging keeps no copy of it (issue #26).
{{ config(materialized='incremental', unique_key='event_id', incremental_strategy='append') }}

with

events as (

    select source.* from ({{ staged_events(new_only=false) }}) as source
    {%- if is_incremental() %}
    -- an explicit ANTI JOIN, not `not exists (...)`: DuckDB plans that as a delim join that
    -- caches every new payload in memory (macros/staged_events.sql)
    anti join {{ this }} as seen on source.event_id = seen.event_id
    where source._load_id >= {{ first_unseen_load_id(ref('stg_events'), 'event_id', 'event_id') }}
    {%- endif %}

),

final as (

    select
        event_id,
        event_type,
        schema_version,
        stored_schema_version,
        run_id,
        occurred_at,
        segment,
        line_no,
        content_sha256,
        prev_sha256,
        producer,
        payload
    from events

)

select * from final
