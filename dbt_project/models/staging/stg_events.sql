with

source as (

    select * from {{ source('raw', 'events') }}

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
        line_no
    from source
    -- Ingest merges insert-only on event_id; this keeps staging exact even if a raw table was
    -- appended twice. The first occurrence in log order wins (the same fact either way).
    qualify row_number() over (partition by event_id order by segment, line_no) = 1

)

select * from renamed
