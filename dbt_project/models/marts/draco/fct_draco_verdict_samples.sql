-- One row per judge_verdict event of every deep-research run, i.e. per (run_id, lane, item_id,
-- attempt, judge_id, criterion_id, sample, judge_attempt): every sample as the judge gave it,
-- for lineage; superseded judge attempts included (is_latest_attempt = false).
--   is_latest_attempt  this is the judge attempt that scores (the highest judge_attempt of the
--                      sample; ties: the later event, then the larger event id; the same rule as
--                      int_draco_verdicts_resolved);
--   flagged            outcome unparsed or failed: met is the least favourable verdict;
--   met                the met that scores, derived from the outcome by the rule of
--                      int_draco_verdicts_resolved (parsed -> verdict = MET, else polarity =
--                      negative); met_recorded is the event's own met, met_overridden = they
--                      differ;
--   judge_model        the regime's model (judge_regime_registered); llm_* describe the call
--                      that decided this verdict and are NULL when no call was recorded;
--   earlier_calls      JSON list of the earlier, unscored completions of the sample (re-asks).
-- Incremental (macros/incremental_events.sql): a build recomputes only the samples that got a
-- new verdict event, with every judge attempt of those samples (is_latest_attempt needs them),
-- and the samples whose regime (int_draco_run_judges) is now told by another registration.
{{ config(
    materialized='incremental',
    incremental_strategy='delete+insert',
    unique_key=['run_id', 'lane', 'item_id', 'attempt', 'judge_id', 'criterion_id', 'sample'],
) }}
{%- set sample_key = 'run_id, lane, item_id, attempt, judge_id, criterion_id, sample' %}

with

runs as (

    select * from {{ ref('int_draco_runs') }}

),

-- the regime each (run, judge) is told by: one rule, in int_draco_run_judges
regimes as (

    select
        run_id,
        judge_id,
        judge_model,
        judge_official,
        regime_event_id
    from {{ ref('int_draco_run_judges') }}
    where is_registered

),

{%- if is_incremental() %}

touched as (

    select distinct {{ sample_key }}
    from {{ ref('stg_events__judge_verdict') }} as new_verdicts
    where _load_id >= {{ first_unseen_load_id(
            ref('stg_events__judge_verdict'), 'verdict_event_id', 'verdict_event_id') }}
        and not exists (
            select 1 from {{ this }} as seen
            where seen.verdict_event_id = new_verdicts.verdict_event_id
        )
    union
    -- samples whose regime is now told by another registration: one that arrived after their
    -- verdicts (a split run's shard loaded later, with an earlier registration)
    select distinct {{ sample_key }}
    from {{ this }} as seen
    where exists (
            select 1 from regimes
            where regimes.run_id = seen.run_id and regimes.judge_id = seen.judge_id
                and regimes.regime_event_id is distinct from seen.regime_event_id
        )

),
{%- endif %}

verdicts as (

    select verdicts.*
    from {{ ref('stg_events__judge_verdict') }} as verdicts
    inner join runs on verdicts.run_id = runs.run_id
    {%- if is_incremental() %}
    semi join touched on
        {%- for column in sample_key.split(', ') %}
        {{ 'and ' if not loop.first }}verdicts.{{ column }} = touched.{{ column }}
        {%- endfor %}
    {%- endif %}

),


ranked as (

    select
        * exclude (met),
        met as met_recorded,
        {{ draco_met_scored() }} as met_scored,  -- macros/draco.sql: the one rule
        row_number() over (
            partition by run_id, lane, item_id, attempt, judge_id, criterion_id, sample
            order by judge_attempt desc, occurred_at desc, verdict_event_id desc
        ) = 1 as is_latest_attempt
    from verdicts

),

final as (

    select
        ranked.run_id,
        ranked.lane,
        ranked.item_id,
        ranked.attempt,
        ranked.judge_id,
        ranked.criterion_id,
        ranked.sample,
        ranked.judge_attempt,
        ranked.is_latest_attempt,
        ranked.polarity,
        ranked.outcome,
        ranked.outcome in ('unparsed', 'failed') as flagged,
        ranked.verdict,
        ranked.met_scored as met,
        ranked.met_recorded,
        coalesce(ranked.met_scored != ranked.met_recorded, true) as met_overridden,
        ranked.justification,
        ranked.reasks,
        ranked.error_class,
        ranked.error_message,
        regimes.judge_model,
        regimes.judge_official,
        ranked.llm_provider,
        ranked.llm_model,
        ranked.llm_temperature,
        ranked.llm_prompt_sha256 as prompt_sha256,
        ranked.llm_raw_completion as raw_completion,
        ranked.llm_input_tokens,
        ranked.llm_output_tokens,
        ranked.llm_latency_ms,
        json_array_length(ranked.earlier_calls) as n_earlier_calls,
        ranked.earlier_calls,
        ranked.occurred_at,
        ranked.verdict_event_id,
        ranked.source_event_id,
        regimes.regime_event_id
    from ranked
    left join regimes on ranked.run_id = regimes.run_id and ranked.judge_id = regimes.judge_id

)

select * from final
