-- One terminal outcome per (run, item, system): the latest attempt wins, whether it completed
-- or failed (a retry that fails supersedes an earlier success and vice versa). Ties on the
-- attempt number go to the later event, then to the completion, then to the larger event id,
-- so the choice never depends on load order.
with

completed as (

    select
        run_id,
        item_id,
        system,
        system_version,
        attempt,
        occurred_at,
        'completed' as outcome,
        extraction_event_id,
        extraction_content_sha256,
        extraction_source,
        render_path,
        output_text,
        output_bytes,
        latency_ms,
        cast(null as varchar) as error_class,
        cast(null as varchar) as error_message
    from {{ ref('stg_events__extraction_completed') }}

),

failed as (

    select
        run_id,
        item_id,
        system,
        system_version,
        attempt,
        occurred_at,
        'failed' as outcome,
        extraction_event_id,
        extraction_content_sha256,
        cast(null as varchar) as extraction_source,
        cast(null as varchar) as render_path,
        cast(null as varchar) as output_text,
        cast(null as bigint) as output_bytes,
        latency_ms,
        error_class,
        error_message
    from {{ ref('stg_events__extraction_failed') }}

),

attempts as (

    select * from completed
    union all
    select * from failed

),

resolved as (

    select
        *,
        count(*) over (partition by run_id, item_id, system) as n_attempts
    from attempts
    qualify row_number() over (
            partition by run_id, item_id, system
            order by attempt desc, occurred_at desc, outcome = 'completed' desc, extraction_event_id desc
        ) = 1

)

select * from resolved
