with

source as (

    select * from {{ ref('stg_events') }}
    where event_type = 'item_registered'{{ only_new_loads() }}

),

renamed as (

    select
        _load_id,
        event_id as item_event_id,
        run_id,
        occurred_at as registered_at,
        payload ->> 'item_id' as item_id,
        payload ->> 'dataset_sha256' as dataset_sha256,
        cast(payload ->> 'position' as bigint) as position,
        payload ->> 'url' as url,
        payload ->> 'vertical' as vertical,
        payload ->> 'ground_truth_text' as ground_truth_text,
        from_json(payload -> 'anchors', '["VARCHAR"]') as anchors,
        payload ->> 'anchor_rule_version' as anchor_rule_version,
        payload ->> 'input_sha256' as input_sha256,
        cast(payload ->> 'input_bytes' as bigint) as input_bytes,
        content_sha256 as item_content_sha256
    from source

)

select * from renamed
