-- The rubric score (methodology 1.3) at both grains DRACO reports, from ONE aggregation of the
-- criteria (grouping sets, written as a rollup of the axis), so the item and its sections are
-- summed by the same rule:
--   is_axis false: one row per (run_id, lane, judge_id, item_id) over the FLAT list of all the
--                  item's criteria (not a mean of its axis scores); axis and axis_title NULL;
--   is_axis true:  one row per (run_id, lane, judge_id, item_id, axis) over the section's own.
-- Lower bound, never biased up: a criterion or sample not judged counts at its least favourable
-- verdict (v_scored of int_draco_criteria_scored), and P is the positive mass of every criterion
-- of the group, judged or not:
--   raw = sum(w_i * v_scored_i), P = sum of the positive weights of all the group's criteria,
--   score = rubric_score(raw, P), i.e. clamp(raw / P, 0, 1) and 0 when P <= 0 or NULL;
--   pass_rate = passed / all the group's criteria (an unjudged criterion is not passed).
-- A group without a report (failed, missing, unreported) scores 0.0 and passes 0, whatever the
-- weights in effect. int_draco_items_scored adds the item's status and lineage.
-- Incremental per run (macros/incremental_events.sql): only the runs with a new event are
-- scored again (every run after a change of scoring vars).
-- depends_on: {{ ref('stg_events') }}
{#- the scoring vars its rows depend on -#}
{%- set scoring_inputs = ['draco_penalty_floor', 'draco_weight_override_rows', 'draco_pass_threshold'] %}
{{ per_run_incremental_config() }}
with

criteria as (

    select * from {{ ref('int_draco_criteria_scored') }}
    where true {{ only_runs_with_new_events(scoring_inputs) }}

),

summed as (

    select
        run_id,
        lane,
        judge_id,
        item_id,
        axis,
        grouping(axis) = 0 as is_axis,
        case when grouping(axis) = 0 then any_value(axis_title) end as axis_title,
        {{ rubric_sums() }},
        count(*) filter (where polarity = 'negative') as n_negative,
        cast(sum(n_flagged_samples) as bigint) as n_flagged_samples,
        cast(sum(n_samples) as bigint) as n_samples,
        cast(sum(coalesce(n_samples_expected, 1)) as bigint) as n_samples_expected,
        count(*) filter (
            where n_samples = 0 or n_samples < coalesce(n_samples_expected, 1)
        ) as n_criteria_short,
        cast(sum(n_unparsed_samples) as bigint) as n_unparsed_samples,
        cast(sum(n_failed_samples) as bigint) as n_failed_samples,
        cast(sum(n_retried_samples) as bigint) as n_retried_samples,
        cast(sum(n_met_overridden_samples) as bigint) as n_met_overridden_samples,
        {{ stable_sum('weight', 'criterion_position', where='weight < 0') }} as negative_weight_all,
        bool_and(research_state = 'reported') as has_report
    from criteria
    -- = grouping sets ((run_id, lane, judge_id, item_id), (run_id, lane, judge_id, item_id, axis))
    group by run_id, lane, judge_id, item_id, rollup(axis)

),

final as (

    select
        run_id,
        lane,
        judge_id,
        item_id,
        is_axis,
        axis,
        axis_title,
        n_criteria,
        n_criteria_judged,
        n_negative,
        n_passed,
        n_split,
        n_flagged_samples,
        n_samples,
        n_samples_expected,
        n_criteria_short,
        n_unparsed_samples,
        n_failed_samples,
        n_retried_samples,
        n_met_overridden_samples,
        coalesce(raw_score, 0.0) as raw_score,
        positive_weight,
        negative_weight_all,
        case
            when has_report then {{ rubric_score('raw_score', 'positive_weight') }} else 0.0
        end as score,
        case
            when has_report and n_criteria > 0 then cast(n_passed as double) / n_criteria else 0.0
        end as pass_rate
    from summed

)

select
    *,
    {{ per_run_cursor_columns(scoring_inputs) }}
from final
