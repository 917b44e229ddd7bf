-- The live-URL leaderboard (methodology §4.1): per run, engine and vertical ('all' = every
-- vertical), over the URLs hygiene kept. Failures score 0; weights are shown on every row.
--   raw / useful success rate: over scored URLs
--   completeness: mean over raw-successful fetches with consensus anchors
--   token_f1: mean over scored URLs that have a consensus passage (failures count 0)
--   (both means summed in item order, macros/stable_avg.sql: two builds agree to the bit)
--   latency p50/p95: over terminal events with a latency; avg_output_bytes: over scored URLs
--   cost_per_1k_useful_usd = list price per 1k requests x requests sent (every URL of the
--     slice, excluded ones too: they were billed) / useful successes (NULL price -> NULL;
--     no useful success -> NULL)
{%- set weights = extraction_weights() %}
{%- set latency_scale_s = number_var('latency_scale_s', 0, min_inclusive=false) %}
{%- set throughput_full_bytes = number_var('throughput_full_bytes', 0, min_inclusive=false) %}

with

pages as (

    select * from {{ ref('fct_live_extraction_pages') }}

),

prices as (

    select * from {{ ref('extraction_prices') }}

),

sliced as (

    select
        *,
        vertical as slice
    from pages
    union all
    select
        *,
        'all' as slice
    from pages

),

per_engine as (

    select
        run_id,
        system,
        slice as vertical,
        any_value(system_version) as system_version,
        any_value(engine_kind) as engine_kind,
        any_value(provider) as provider,
        any_value(ground_truth) as ground_truth,
        count(*) filter (where not excluded) as urls_scored,
        count(*) filter (where excluded) as urls_excluded,
        count(*) filter (where not excluded and useful_success) as useful_successes,
        avg(case when raw_success then 1.0 else 0.0 end) filter (where not excluded) as raw_success_rate,
        avg(case when useful_success then 1.0 else 0.0 end) filter (where not excluded) as useful_success_rate,
        {{ stable_avg('completeness', where='not excluded and raw_success') }} as completeness,
        {{ stable_avg('coalesce(token_f1, 0.0)', where='not excluded and passage_tokens > 0') }} as token_f1,
        quantile_cont(latency_ms, 0.5) filter (where not excluded) / 1000.0 as latency_p50_s,
        quantile_cont(latency_ms, 0.95) filter (where not excluded) / 1000.0 as latency_p95_s,
        avg(output_bytes) filter (where not excluded) as avg_output_bytes,
        sum(requests_sent) as requests_sent
    from sliced
    group by run_id, system, slice

),

priced as (

    select
        per_engine.*,
        case
            when per_engine.engine_kind = 'local' then 0.0
            else prices.usd_per_1k_requests
        end as usd_per_1k_requests,
        prices.price_snapshot_date,
        case
            when per_engine.engine_kind = 'local' then 'local: no billed requests'
            else coalesce(prices.basis, 'unknown: not in the extraction_prices seed')
        end as price_basis
    from per_engine
    left join prices on per_engine.system = prices.system

),

scored as (

    select
        *,
        usd_per_1k_requests * requests_sent / nullif(useful_successes, 0) as cost_per_1k_useful_usd,
        case
            when latency_p95_s is not null then exp(-latency_p95_s / {{ latency_scale_s }})
        end as latency_score,
        case
            when avg_output_bytes is not null then least(avg_output_bytes / {{ throughput_full_bytes }}, 1.0)
        end as throughput_score
    from priced

)

select
    *,
    cast({{ weights.completeness }} as double) * coalesce(completeness, 0)
    + cast({{ weights.success }} as double) * coalesce(useful_success_rate, 0)
    + cast({{ weights.f1 }} as double) * coalesce(token_f1, 0)
    + cast({{ weights.latency }} as double) * coalesce(latency_score, 0)
    + cast({{ weights.throughput }} as double) * coalesce(throughput_score, 0) as composite,
    cast({{ weights.completeness }} as double) as weight_completeness,
    cast({{ weights.success }} as double) as weight_success,
    cast({{ weights.f1 }} as double) as weight_f1,
    cast({{ weights.latency }} as double) as weight_latency,
    cast({{ weights.throughput }} as double) as weight_throughput
from scored
