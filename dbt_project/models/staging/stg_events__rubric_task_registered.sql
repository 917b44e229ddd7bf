-- One row per rubric_task_registered event, i.e. per (run_id, item_id).
with

source as (

    {{ staged_events('rubric_task_registered') }}

),

renamed as (

    select
        _load_id,
        event_id as task_event_id,
        run_id,
        occurred_at,
        payload ->> 'item_id' as item_id,
        payload ->> 'dataset_sha256' as dataset_sha256,
        cast(payload ->> 'position' as bigint) as position,
        payload ->> 'domain' as domain,
        payload ->> 'problem' as problem,
        payload ->> 'rubric_id' as rubric_id,
        cast(payload ->> 'criteria_count' as bigint) as criteria_count
    from source

)

select * from renamed
