with

source as (

    {{ staged_events('live_url_registered') }}

),

renamed as (

    select
        _load_id,
        event_id as url_event_id,
        run_id,
        payload ->> 'item_id' as item_id,
        payload ->> 'dataset_sha256' as dataset_sha256,
        cast(payload ->> 'position' as bigint) as position,
        payload ->> 'url' as url,
        payload ->> 'vertical' as vertical,
        payload ->> 'render_requested' as render_requested
    from source

)

select * from renamed
