with

events as (

    select * from {{ ref('stg_events') }}

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
