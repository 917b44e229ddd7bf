-- One row per judge_verdict event, i.e. per (run_id, lane, item_id, attempt, judge_id,
-- criterion_id, sample, judge_attempt). `met` is already the least favourable verdict for an
-- unparsed or failed sample (warehouse/events.py); llm_* are NULL when no LLM was called;
-- earlier_calls is the JSON list of the sample's earlier, unscored completions (re-asks).
with

source as (

    select * from {{ ref('stg_events') }}
    where event_type = 'judge_verdict'{{ only_new_loads() }}

),

renamed as (

    select
        _load_id,
        event_id as verdict_event_id,
        run_id,
        occurred_at,
        payload ->> 'lane' as lane,
        payload ->> 'item_id' as item_id,
        cast(payload ->> 'attempt' as bigint) as attempt,
        payload ->> 'judge_id' as judge_id,
        payload ->> 'criterion_id' as criterion_id,
        cast(payload ->> 'sample' as bigint) as sample,
        cast(payload ->> 'judge_attempt' as bigint) as judge_attempt,
        payload ->> 'polarity' as polarity,
        payload ->> 'outcome' as outcome,
        payload ->> 'verdict' as verdict,
        cast(payload ->> 'met' as boolean) as met,
        payload ->> 'justification' as justification,
        cast(payload ->> 'reasks' as bigint) as reasks,
        payload ->> 'error_class' as error_class,
        payload ->> 'error_message' as error_message,
        payload ->> 'source_event_id' as source_event_id,
        payload ->> '$.llm.provider' as llm_provider,
        payload ->> '$.llm.model' as llm_model,
        cast(payload ->> '$.llm.temperature' as double) as llm_temperature,
        payload ->> '$.llm.prompt_sha256' as llm_prompt_sha256,
        payload ->> '$.llm.raw_completion' as llm_raw_completion,
        cast(payload ->> '$.llm.input_tokens' as bigint) as llm_input_tokens,
        cast(payload ->> '$.llm.output_tokens' as bigint) as llm_output_tokens,
        cast(payload ->> '$.llm.latency_ms' as double) as llm_latency_ms,
        coalesce(payload -> 'earlier_calls', '[]') as earlier_calls
    from source

)

select * from renamed
