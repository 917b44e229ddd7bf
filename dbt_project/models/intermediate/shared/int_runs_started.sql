-- One row per run that has a run_started event: the run as it was started. A run split across
-- machines (`bench run … --shard K/N`) is started by each shard, in an event of its own; the
-- run is told by its earliest start (then the smallest event id), a rule of the events alone, so
-- the row is the same whichever shard's log was loaded first.
with

starts as (

    select * exclude (_load_id, shard, shards)
    from {{ ref('stg_events__run_started') }}

),

final as (

    select * from starts
    qualify row_number() over (
            partition by run_id order by started_at, run_started_event_id
        ) = 1

)

select * from final
