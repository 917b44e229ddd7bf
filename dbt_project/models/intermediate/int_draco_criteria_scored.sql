{%- set threshold = draco_pass_threshold() %}
-- One row per (run_id, lane, judge_id, item_id, criterion_id): every criterion of every item of
-- the grid (int_draco_items_resolved), with the resolved samples of the scored attempt's report
-- (verdicts of that attempt whose source is that report_normalized). Incomplete items are
-- scored as a LOWER BOUND, never biased up (methodology 1.2 least favourable verdict, 1.3):
--   n_samples_expected = the regime's samples (1 for a judge without registration);
--   n_samples_filled   = greatest(n_samples_expected - n_samples, 0): each sample that is
--                        missing (not judged yet, or no report / no research at all) takes the
--                        least favourable verdict (UNMET for a positive criterion, MET for a
--                        negative one);
--   v        = mean(met) over the samples present (NULL when none): what the judge said, for
--              agreement / split statistics;
--   v_scored = (n_met + filled MET) / (n_samples + n_samples_filled): the v that scores, so a
--              criterion without samples scores v 0 (positive) or 1 (negative);
--   weighted_v = weight * v_scored;
--   split  = 0 < v < 1 (over the samples present);
--   passed = (positive and v_scored >= var draco_pass_threshold) or (negative and v_scored <
--            threshold): a criterion without samples is never passed;
--   flagged samples = unparsed + failed (their met is the least favourable verdict, enforced in
--   int_draco_verdicts_resolved); n_met_overridden_samples = samples whose recorded met
--   disagreed with that rule.
with

items as (

    select * from {{ ref('int_draco_items_resolved') }}

),

criteria as (

    select * from {{ ref('int_draco_criteria_weighted') }}

),

judges as (

    select * from {{ ref('int_draco_run_judges') }}

),

verdicts as (

    select * from {{ ref('int_draco_verdicts_resolved') }}

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
        criteria.axis,
        criteria.axis_title,
        criteria.criterion_position,
        criteria.requirement,
        criteria.polarity,
        criteria.registered_weight,
        criteria.weight,
        criteria.is_overridden,
        criteria.override_reason,
        criteria.is_floored,
        criteria.criterion_event_id,
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

lower_bound as (

    select
        *,
        cast(
            n_met + case when polarity = 'negative' then n_samples_filled else 0 end as double
        ) / greatest(n_samples + n_samples_filled, 1) as v_scored
    from measured

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
        axis,
        axis_title,
        criterion_position,
        requirement,
        polarity,
        registered_weight,
        weight,
        is_overridden,
        override_reason,
        is_floored,
        n_samples_expected,
        n_samples,
        n_samples_filled,
        n_met,
        v,
        v_scored,
        weight * v_scored as weighted_v,
        coalesce(v > 0 and v < 1, false) as split,
        v is not null as judged,
        (polarity = 'positive' and v_scored >= {{ threshold }})
        or (polarity = 'negative' and v_scored < {{ threshold }}) as passed,
        n_unparsed_samples,
        n_failed_samples,
        n_flagged_samples,
        n_flagged_samples > 0 as flagged,
        n_retried_samples,
        n_met_overridden_samples,
        cast({{ threshold }} as double) as pass_threshold,
        criterion_event_id,
        report_event_id,
        verdict_event_ids
    from lower_bound

)

select * from final
