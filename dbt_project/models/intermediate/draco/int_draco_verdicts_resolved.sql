-- One row per (run_id, lane, item_id, attempt, judge_id, criterion_id, sample) of every
-- deep-research run: the verdict with the highest judge_attempt (a failed sample is retried on
-- resume as the next judge_attempt; then the later event, then the larger event id).
-- The scoring met is derived HERE from the recorded outcome, never trusted from the event
-- (methodology 1.2, "least favourable verdict"; flaw 5.1):
--   outcome parsed with verdict MET / UNMET  -> met = (verdict = 'MET');
--   anything else (unparsed, failed, or a parsed sample without a verdict)
--                                             -> met = (polarity = 'negative'), i.e. UNMET for a
--                                                positive criterion and MET (the penalty applies)
--                                                for a negative one.
-- met_recorded is the event's own met, kept for audit; met_overridden = the two differ (a
-- collector that wrote the wrong met is visible, and cannot bias the score up).
-- flagged = the sample is unparsed or failed.
-- Incremental by ingest batch (macros/incremental_events.sql): only the samples with a verdict
-- in a new batch are resolved again, from every judge attempt of those samples.
{{ config(
    materialized='incremental',
    incremental_strategy='delete+insert',
    unique_key=['run_id', 'lane', 'item_id', 'attempt', 'judge_id', 'criterion_id', 'sample'],
) }}
{%- set sample_key = ['run_id', 'lane', 'item_id', 'attempt', 'judge_id', 'criterion_id', 'sample'] %}

with

runs as (

    select * from {{ ref('int_draco_runs') }}

),

superseded as (

    select * from {{ ref('int_corrections_verdicts_superseded') }}
    where superseded_event_type = 'judge_verdict'

),

verdicts as (

    -- a verdict_superseded correction replaces the verdict: it scores as a parsed sample
    select
        verdicts.* replace (
            coalesce(superseded.replacement, verdicts.verdict) as verdict,
            case when superseded.replacement is not null then 'parsed' else verdicts.outcome end
                as outcome
        ),
        superseded.correction_event_id as superseded_by_event_id
    from {{ ref('stg_events__judge_verdict') }} as verdicts
    inner join runs on verdicts.run_id = runs.run_id
    left join superseded on verdicts.verdict_event_id = superseded.superseded_event_id
    {%- if is_incremental() %}
    -- corrections arriving later force a full refresh (transform/dbt_build.py), so only new
    -- verdicts need re-resolving here
    semi join (
        select distinct {{ sample_key | join(', ') }}
        from {{ ref('stg_events__judge_verdict') }}
        where true {{ only_new_loads() }}
    ) as touched on
        {%- for column in sample_key %}
        {{ 'and ' if not loop.first }}verdicts.{{ column }} = touched.{{ column }}
        {%- endfor %}
    {%- endif %}

),

resolved as (

    select
        * exclude (met),
        met as met_recorded,
        {{ draco_met_scored() }} as met,  -- macros/draco.sql: the one rule
        count(*) over (
            partition by run_id, lane, item_id, attempt, judge_id, criterion_id, sample
        ) as n_judge_attempts,
        max(_load_id) over (
            partition by run_id, lane, item_id, attempt, judge_id, criterion_id, sample
        ) as last_load_id
    from verdicts
    qualify row_number() over (
            partition by run_id, lane, item_id, attempt, judge_id, criterion_id, sample
            order by judge_attempt desc, occurred_at desc, verdict_event_id desc
        ) = 1

),

final as (

    select
        run_id,
        lane,
        item_id,
        attempt,
        judge_id,
        criterion_id,
        sample,
        judge_attempt,
        n_judge_attempts,
        polarity,
        outcome,
        verdict,
        met,
        met_recorded,
        superseded_by_event_id is null and coalesce(met != met_recorded, true) as met_overridden,
        outcome in ('unparsed', 'failed') as flagged,
        justification,
        reasks,
        error_class,
        source_event_id,
        llm_model,
        verdict_event_id,
        superseded_by_event_id,
        last_load_id as _load_id
    from resolved

)

select * from final
