-- One row per (run_id, lane, judge_id, item_id, axis): the rubric score of one section
-- (methodology 1.3) over ALL the section's criteria, the same lower-bound rule as the item
-- (int_draco_items_scored): a criterion or sample not judged counts at its least favourable
-- verdict (v_scored of int_draco_criteria_scored), and P is the positive mass of every criterion
-- of the section, judged or not, so an incomplete item is never biased up:
--   raw = sum(w_i * v_scored_i), P = sum of the positive weights of all the section's criteria,
--   score = rubric_score(raw, P), i.e. clamp(raw / P, 0, 1) and 0 when P <= 0 or NULL;
--   pass_rate = passed / all the section's criteria (an unjudged criterion is not passed).
-- An item without a report (failed, missing, unreported) scores 0.0 on every axis, whatever the
-- weights in effect.
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
        any_value(axis_title) as axis_title,
        {{ rubric_sums() }},
        count(*) filter (where polarity = 'negative') as n_negative,
        cast(sum(n_flagged_samples) as bigint) as n_flagged_samples,
        bool_and(research_state = 'reported') as has_report
    from criteria
    group by run_id, lane, judge_id, item_id, axis

),

final as (

    select
        run_id,
        lane,
        judge_id,
        item_id,
        axis,
        axis_title,
        n_criteria,
        n_criteria_judged,
        n_negative,
        n_passed,
        n_split,
        n_flagged_samples,
        coalesce(raw_score, 0.0) as raw_score,
        positive_weight,
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
