-- One row per imported_verdict event, i.e. per (run_id, lane, item_id, judge_id, criterion_id,
-- run_index): a verdict another harness's judge gave (an imported regime). met_rate is 1/0 for
-- a single verdict, the share of MET samples for a harness that averages samples.
with

source as (

    {{ staged_events('imported_verdict') }}

),

renamed as (

    select
        _load_id,
        event_id as imported_verdict_event_id,
        run_id,
        occurred_at,
        payload ->> 'lane' as lane,
        payload ->> 'item_id' as item_id,
        payload ->> 'judge_id' as judge_id,
        payload ->> 'criterion_id' as criterion_id,
        cast(payload ->> 'criterion_position' as bigint) as criterion_position,
        cast(payload ->> 'run_index' as bigint) as run_index,
        payload ->> 'verdict' as verdict,
        cast(payload ->> 'met_rate' as double) as met_rate,
        cast(payload ->> 'samples' as bigint) as samples,
        payload ->> 'justification' as justification,
        payload ->> 'source_event_id' as source_event_id
    from source

)

select * from renamed
