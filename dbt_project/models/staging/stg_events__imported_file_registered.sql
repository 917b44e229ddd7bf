-- One row per imported_file_registered event, i.e. per (run_id, file_sha256, kind): a third-party
-- results file as imported, with its own header figures and per-item figures (JSON, verbatim)
-- and every id that did not join (unmatched = in the file, not in the dataset; absent = in the
-- dataset, not in the file; duplicate = repeated in the file).
with

source as (

    {{ staged_events('imported_file_registered') }}

),

renamed as (

    select
        _load_id,
        event_id as file_event_id,
        run_id,
        occurred_at,
        payload ->> 'benchmark' as benchmark,
        payload ->> 'kind' as kind,
        payload ->> 'format' as source_format,
        payload ->> 'lane' as lane,
        payload ->> 'judge_id' as judge_id,
        payload ->> 'judge_model' as judge_model,
        payload ->> 'judge_label' as judge_label,
        payload ->> 'file_name' as file_name,
        payload ->> 'file_sha256' as file_sha256,
        cast(payload ->> 'file_bytes' as bigint) as file_bytes,
        payload -> 'header' as header,
        payload -> 'item_figures' as item_figures,
        cast(payload -> 'unmatched_ids' as varchar[]) as unmatched_ids,
        cast(payload -> 'absent_ids' as varchar[]) as absent_ids,
        cast(payload -> 'duplicate_ids' as varchar[]) as duplicate_ids
    from source

)

select * from renamed
