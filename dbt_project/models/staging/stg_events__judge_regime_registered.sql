-- One row per judge_regime_registered event, i.e. per (run_id, judge_id, shard). A rejudge
-- registers a new judge_id under the same run; each shard of a split run registers the regime
-- for itself (int_draco_run_judges folds them). judge_model / judge_provider come from the judge's settings
-- (the SystemRef name stands in for a missing model).
with

source as (

    {{ staged_events('judge_regime_registered') }}

),

renamed as (

    select
        _load_id,
        event_id as regime_event_id,
        run_id,
        occurred_at,
        payload ->> 'judge_id' as judge_id,
        payload ->> '$.judge.name' as judge_name,
        payload ->> '$.judge.version' as judge_version,
        payload -> '$.judge.settings' as judge_settings,
        coalesce(payload ->> '$.judge.settings.model', payload ->> '$.judge.name') as judge_model,
        payload ->> '$.judge.settings.provider' as judge_provider,
        cast(payload ->> '$.judge.settings.temperature' as double) as judge_temperature,
        cast(payload ->> 'official' as boolean) as judge_official,
        payload ->> 'prompt_id' as prompt_id,
        payload ->> 'prompt_sha256' as prompt_sha256,
        cast(payload ->> 'samples' as bigint) as samples,
        payload ->> 'normalizer_version' as normalizer_version,
        payload -> 'argv' as argv,
        cast(payload ->> 'shard' as integer) as shard,
        cast(payload ->> 'shards' as integer) as shards
    from source

)

select * from renamed
