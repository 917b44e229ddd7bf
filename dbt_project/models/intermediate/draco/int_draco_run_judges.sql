-- One row per (run_id, judge_id) of every deep-research run: the judge regimes registered on the
-- run (a rejudge registers another under the same run_id), plus any judge_id that left verdicts
-- without a registration (kept, with NULL regime facts, so no verdict is dropped). Scores are
-- only ever compared within one regime. Each shard of a run split across machines registers the
-- regime for itself (the same judge, prompt and samples): the earliest registration tells it
-- (then the smallest event id), a rule of the events alone, whichever shard was loaded first.
with

runs as (

    select * from {{ ref('int_draco_runs') }}

),

registered as (

    select regimes.*
    from {{ ref('stg_events__judge_regime_registered') }} as regimes
    inner join runs on regimes.run_id = runs.run_id
    qualify row_number() over (
            partition by regimes.run_id, regimes.judge_id
            order by regimes.occurred_at, regimes.regime_event_id
        ) = 1

),

seen as (

    select distinct
        verdicts.run_id,
        verdicts.judge_id
    from {{ ref('stg_events__judge_verdict') }} as verdicts
    inner join runs on verdicts.run_id = runs.run_id

),

final as (

    select
        run_id,
        judge_id,
        judge_name,
        judge_version,
        judge_model,
        judge_provider,
        judge_temperature,
        judge_settings,
        judge_official,
        prompt_id,
        prompt_sha256,
        samples,
        normalizer_version,
        regime_event_id,
        true as is_registered
    from registered
    union all
    select
        seen.run_id,
        seen.judge_id,
        cast(null as varchar) as judge_name,
        cast(null as varchar) as judge_version,
        cast(null as varchar) as judge_model,
        cast(null as varchar) as judge_provider,
        cast(null as double) as judge_temperature,
        cast(null as json) as judge_settings,
        cast(null as boolean) as judge_official,
        cast(null as varchar) as prompt_id,
        cast(null as varchar) as prompt_sha256,
        cast(null as bigint) as samples,
        cast(null as varchar) as normalizer_version,
        cast(null as varchar) as regime_event_id,
        false as is_registered
    from seen
    where not exists (
            select 1 as found from registered
            where registered.run_id = seen.run_id and registered.judge_id = seen.judge_id
        )

)

select * from final
