-- One row per (run_id, lane, judge_id, item_id, criterion_id) of every resolved item: the
-- resolved samples of the scored report counted (NULL v when none) and v_scored, each missing
-- sample filled with its least favourable verdict. Reads no scoring var, so a rescore (a new
-- weight, floor or pass threshold) never re-aggregates the verdicts: int_draco_criteria_scored
-- puts the weights in effect on these rows.
-- Incremental per run (macros/incremental_events.sql): only the runs with a new event are
-- counted again.
-- depends_on: {{ ref('stg_events') }}
{%- set scoring_inputs = [] %}  {#- the scoring vars its rows depend on #}
{{ per_run_incremental_config() }}

with

items as (

    select * from {{ ref('int_draco_items_resolved') }}
    where true {{ only_runs_with_new_events(scoring_inputs) }}

),

criteria as (

    select * from {{ ref('int_draco_criteria_registered') }}
    where true {{ only_runs_with_new_events(scoring_inputs) }}

),

judges as (

    select * from {{ ref('int_draco_run_judges') }}
    where true {{ only_runs_with_new_events(scoring_inputs) }}

),

verdicts as (

    select * from {{ ref('int_draco_verdicts_resolved') }}
    where true {{ only_runs_with_new_events(scoring_inputs) }}

),

item_criteria as (

    select
        items.run_id,
        items.lane,
        items.judge_id,
        items.item_id,
        items.attempt,
        items.research_state,
        items.report_event_id,
        criteria.criterion_id,
        criteria.criterion_position,
        criteria.polarity,
        coalesce(judges.samples, 1) as n_samples_expected
    from items
    inner join criteria
        on items.run_id = criteria.run_id and items.item_id = criteria.item_id
    inner join judges
        on items.run_id = judges.run_id and items.judge_id = judges.judge_id

),

samples as (

    select
        item_criteria.run_id,
        item_criteria.lane,
        item_criteria.judge_id,
        item_criteria.item_id,
        item_criteria.criterion_id,
        count(*) as n_samples,
        count(*) filter (where verdicts.met) as n_met,
        count(*) filter (where verdicts.outcome = 'unparsed') as n_unparsed_samples,
        count(*) filter (where verdicts.outcome = 'failed') as n_failed_samples,
        count(*) filter (where verdicts.flagged) as n_flagged_samples,
        count(*) filter (where verdicts.n_judge_attempts > 1) as n_retried_samples,
        count(*) filter (where verdicts.met_overridden) as n_met_overridden_samples,
        list(verdicts.verdict_event_id order by verdicts.sample) as verdict_event_ids
    from item_criteria
    inner join verdicts
        on item_criteria.run_id = verdicts.run_id
            and item_criteria.lane = verdicts.lane
            and item_criteria.item_id = verdicts.item_id
            and item_criteria.attempt = verdicts.attempt
            and item_criteria.judge_id = verdicts.judge_id
            and item_criteria.criterion_id = verdicts.criterion_id
            and item_criteria.report_event_id = verdicts.source_event_id
    where item_criteria.research_state = 'reported'
    group by
        item_criteria.run_id,
        item_criteria.lane,
        item_criteria.judge_id,
        item_criteria.item_id,
        item_criteria.criterion_id

),

measured as (

    select
        item_criteria.*,
        coalesce(samples.n_samples, 0) as n_samples,
        coalesce(samples.n_met, 0) as n_met,
        coalesce(samples.n_unparsed_samples, 0) as n_unparsed_samples,
        coalesce(samples.n_failed_samples, 0) as n_failed_samples,
        coalesce(samples.n_flagged_samples, 0) as n_flagged_samples,
        coalesce(samples.n_retried_samples, 0) as n_retried_samples,
        coalesce(samples.n_met_overridden_samples, 0) as n_met_overridden_samples,
        greatest(item_criteria.n_samples_expected - coalesce(samples.n_samples, 0), 0)
            as n_samples_filled,
        case
            when samples.n_samples > 0 then cast(samples.n_met as double) / samples.n_samples
        end as v,
        coalesce(samples.verdict_event_ids, []) as verdict_event_ids
    from item_criteria
    left join samples
        on item_criteria.run_id = samples.run_id
            and item_criteria.lane = samples.lane
            and item_criteria.judge_id = samples.judge_id
            and item_criteria.item_id = samples.item_id
            and item_criteria.criterion_id = samples.criterion_id

),

final as (

    select
        run_id,
        lane,
        judge_id,
        item_id,
        criterion_id,
        attempt,
        research_state,
        criterion_position,
        polarity,
        n_samples_expected,
        n_samples,
        n_samples_filled,
        n_met,
        v,
        cast(
            n_met + case when polarity = 'negative' then n_samples_filled else 0 end as double
        ) / greatest(n_samples + n_samples_filled, 1) as v_scored,
        coalesce(v > 0 and v < 1, false) as split,
        v is not null as judged,
        n_unparsed_samples,
        n_failed_samples,
        n_flagged_samples,
        n_flagged_samples > 0 as flagged,
        n_retried_samples,
        n_met_overridden_samples,
        report_event_id,
        verdict_event_ids,
        {{ per_run_cursor_columns(scoring_inputs) }}
    from measured

)

select * from final
