-- One row per item_excluded event: an item taken out of (excluded = false: put back into) one
-- family's scores, over every run of a dataset (scope_run_id NULL) or one run.
with

source as (

    {{ staged_events('item_excluded') }}

),

renamed as (

    select
        _load_id,
        event_id as correction_event_id,
        run_id,
        occurred_at,
        payload ->> 'benchmark' as family,
        payload ->> 'dataset_sha256' as dataset_sha256,
        payload ->> 'item_id' as item_id,
        payload ->> 'scope_run_id' as scope_run_id,
        cast(payload ->> 'excluded' as boolean) as excluded,
        payload ->> 'reason' as reason,
        payload ->> '$.provenance.source' as provenance_source,
        payload ->> '$.provenance.actor' as provenance_actor,
        payload ->> '$.provenance.file_name' as provenance_file_name,
        payload ->> '$.provenance.file_sha256' as provenance_file_sha256,
        payload -> '$.provenance.argv' as provenance_argv
    from source

)

select * from renamed
