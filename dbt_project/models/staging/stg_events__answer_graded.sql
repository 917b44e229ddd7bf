with

source as (

    {{ staged_events('answer_graded') }}

),

renamed as (

    select
        _load_id,
        event_id as grade_event_id,
        run_id,
        occurred_at,
        payload ->> 'lane' as lane,
        payload ->> 'item_id' as item_id,
        cast(payload ->> 'attempt' as bigint) as attempt,
        payload ->> 'grader_id' as grader_id,
        cast(payload ->> 'official' as boolean) as grader_official,
        payload ->> 'grade' as grade,
        payload ->> 'label' as label,
        cast(payload ->> 'parse_ok' as boolean) as parse_ok,
        -- parsed | unparsed | failed (a failed call, least favourable verdict), as judge_verdict
        payload ->> 'outcome' as outcome,
        payload ->> 'error_class' as error_class,
        payload ->> 'error_message' as error_message,
        payload ->> 'source_event_id' as source_event_id,
        -- no LLM record: graded by rule (a landed non-answer is a miss without a grader call)
        (payload -> 'llm') is null or json_type(payload -> 'llm') = 'NULL' as graded_by_rule,
        payload ->> '$.llm.model' as grader_model
    from source

)

select * from renamed
