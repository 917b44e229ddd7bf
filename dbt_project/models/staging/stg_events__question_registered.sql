with

source as (

    {{ staged_events('question_registered') }}

),

renamed as (

    select
        _load_id,
        event_id as question_event_id,
        run_id,
        occurred_at,
        payload ->> 'item_id' as item_id,
        payload ->> 'dataset_sha256' as dataset_sha256,
        cast(payload ->> 'row_position' as bigint) as row_position,
        cast(payload ->> 'sample_order' as bigint) as sample_order,
        payload ->> 'problem' as problem,
        payload ->> 'gold_answer' as gold_answer,
        cast(coalesce(payload -> 'gold_urls_raw', '[]') as varchar[]) as gold_urls_raw,
        payload ->> 'topic' as topic,
        payload ->> 'answer_type' as answer_type
    from source

)

select * from renamed
