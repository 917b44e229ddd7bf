with

source as (

    {{ staged_events('provider_call_failed') }}

),

renamed as (

    select
        _load_id,
        event_id as call_event_id,
        run_id,
        occurred_at,
        payload ->> 'lane' as lane,
        payload ->> 'provider' as provider,
        payload ->> 'stage' as stage,
        payload ->> 'item_id' as item_id,
        cast(payload ->> 'attempt' as bigint) as attempt,
        payload ->> 'error_class' as error_class,
        payload ->> 'error_message' as error_message,
        cast(payload ->> 'status_code' as bigint) as status_code,
        cast(payload ->> 'landed' as boolean) as landed,
        cast(payload ->> '$.timings.queue_wait_ms' as double) as queue_wait_ms,
        cast(payload ->> '$.timings.round_trip_ms' as double) as round_trip_ms,
        cast(payload ->> '$.timings.whole_call_ms' as double) as whole_call_ms,
        cast(payload ->> 'http_attempts' as bigint) as http_attempts,
        cast(payload ->> 'concurrency' as bigint) as concurrency,
        cast(payload ->> 'rate_per_s' as double) as rate_per_s
    from source

)

select * from renamed
