-- One row per report_normalized event, i.e. per (run_id, lane, item_id, attempt, normalizer_version).
with

source as (

    {{ staged_events('report_normalized') }}

),

renamed as (

    select
        _load_id,
        event_id as report_event_id,
        run_id,
        occurred_at,
        payload ->> 'lane' as lane,
        payload ->> 'item_id' as item_id,
        cast(payload ->> 'attempt' as bigint) as attempt,
        payload ->> 'normalizer_version' as normalizer_version,
        payload ->> 'source_event_id' as source_event_id,
        payload ->> 'raw_output_sha256' as raw_output_sha256,
        cast(payload ->> 'stripped_bibliography' as boolean) as stripped_bibliography,
        payload ->> 'strip_heading' as strip_heading,
        payload ->> 'stripped_text' as stripped_text,
        payload -> 'bibliography' as bibliography,
        json_array_length(coalesce(payload -> 'bibliography', '[]')) as n_bibliography,
        payload ->> 'judged_text' as judged_text
    from source

)

select * from renamed
