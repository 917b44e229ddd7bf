with

source as (

    {{ staged_events('page_fetched') }}

),

renamed as (

    select
        _load_id,
        event_id as fetch_event_id,
        run_id,
        occurred_at,
        payload ->> 'item_id' as item_id,
        cast(payload ->> 'attempt' as bigint) as attempt,
        payload ->> 'url' as url,
        payload ->> 'final_url' as final_url,
        cast(payload ->> 'status_code' as bigint) as status_code,
        payload -> 'redirect_chain' as redirect_chain,
        json_array_length(payload -> 'redirect_chain') as redirect_hops,
        cast(payload ->> 'body_bytes' as bigint) as body_bytes,
        payload ->> 'body_sha256' as body_sha256,
        cast(payload ->> 'body_truncated' as boolean) as body_truncated,
        payload ->> 'encoding' as encoding,
        payload ->> 'render_requested' as render_requested,
        payload ->> 'render_used' as render_used,
        payload ->> 'error_class' as error_class,
        payload ->> 'error_message' as error_message,
        cast(payload ->> 'elapsed_ms' as double) as elapsed_ms
    from source

)

select * from renamed
