with

source as (

    {{ staged_events('answer_synthesized') }}

),

renamed as (

    select
        _load_id,
        event_id as answer_event_id,
        run_id,
        occurred_at,
        payload ->> 'lane' as lane,
        payload ->> 'item_id' as item_id,
        cast(payload ->> 'attempt' as bigint) as attempt,
        payload ->> 'outcome' as outcome,
        payload ->> 'answer' as answer,
        cast(coalesce(payload -> 'chunk_ranks_used', '[]') as bigint[]) as chunk_ranks_used,
        payload ->> '$.llm.model' as synth_model
    from source

)

select * from renamed
