-- One row per verdict_superseded event: a stored verdict (judge_verdict / imported_verdict:
-- MET / UNMET; answer_graded: A / B / C) replaced by a corrected one, with reason and provenance.
with

source as (

    {{ staged_events('verdict_superseded') }}

),

renamed as (

    select
        _load_id,
        event_id as correction_event_id,
        run_id,
        occurred_at,
        payload ->> 'superseded_event_id' as superseded_event_id,
        payload ->> 'superseded_event_type' as superseded_event_type,
        payload ->> 'replacement' as replacement,
        payload ->> 'reason' as reason,
        payload ->> '$.provenance.source' as provenance_source,
        payload ->> '$.provenance.actor' as provenance_actor,
        payload ->> '$.provenance.file_name' as provenance_file_name,
        payload ->> '$.provenance.file_sha256' as provenance_file_sha256,
        payload -> '$.provenance.argv' as provenance_argv
    from source

)

select * from renamed
