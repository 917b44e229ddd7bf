with

source as (

    {{ staged_events('run_finished') }}

),

renamed as (

    select
        _load_id,
        event_id as run_finished_event_id,
        run_id,
        occurred_at as finished_at,
        cast(payload ->> 'terminal_events' as bigint) as terminal_events,
        cast(payload ->> 'completed' as bigint) as completed,
        cast(payload ->> 'failed' as bigint) as failed,
        cast(payload ->> 'duration_s' as double) as duration_s,
        -- one shard of a run split across machines (`bench run … --shard K/N`); null: a whole run
        cast(payload ->> 'shard' as integer) as shard,
        cast(payload ->> 'shards' as integer) as shards,
        content_sha256
    from source

)

select * from renamed
