with

source as (

    {{ staged_events('relevance_graded') }}

),

renamed as (

    select
        _load_id,
        event_id as relevance_event_id,
        run_id,
        occurred_at,
        payload ->> 'lane' as lane,
        payload ->> 'item_id' as item_id,
        cast(payload ->> 'attempt' as bigint) as attempt,
        cast(payload ->> 'rank' as bigint) as chunk_rank,
        payload ->> 'judge_id' as judge_id,
        cast(payload ->> 'grade' as bigint) as grade,
        cast(payload ->> 'parse_ok' as boolean) as parse_ok,
        -- parsed | unparsed | failed (a failed call, least favourable verdict), as judge_verdict
        payload ->> 'outcome' as outcome,
        payload ->> 'error_class' as error_class,
        payload ->> 'error_message' as error_message,
        payload ->> 'source_event_id' as source_event_id
    from source

)

select * from renamed
