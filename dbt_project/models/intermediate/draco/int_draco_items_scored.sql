{%- set axes = {
    'factual-accuracy': 'factual_accuracy',
    'breadth-and-depth-of-analysis': 'breadth_and_depth_of_analysis',
    'presentation-quality': 'presentation_quality',
    'citation-quality': 'citation_quality',
} %}
-- One row per (run_id, lane, judge_id, item_id) of the grid: the item score over the FLAT list of
-- all its criteria (not a mean of axis scores; methodology 1.3) and the four DRACO axis scores,
-- both summed by int_draco_rubric_scored (one aggregation at both grains; an axis score is NULL
-- for a rubric set without that section), and the status:
--   failed     no successful research (research_failed): score 0.0 on every axis, pass rate 0;
--   missing    no terminal research event yet: scored 0.0 like a failure, counted apart;
--   incomplete research succeeded but some criterion x sample verdict is missing (judging not
--              finished, or not started): scored as a LOWER BOUND, counted in n_incomplete;
--   scored     every criterion has the regime's number of samples.
-- Lower bound, never biased up (methodology 1.2 least favourable verdict, 1.3): raw and P are
-- over ALL the item's criteria, judged or not. P is always the positive mass of every criterion
-- (1 of 40 criteria judged and MET does not score 100 %); a missing sample takes the least
-- favourable verdict (v_scored of int_draco_criteria_scored: v 0 for a positive criterion, 1 for
-- a negative one when nothing is judged); pass_rate = passed / all criteria, an unjudged
-- criterion not passed. The item score only rises as verdicts arrive or are better.
-- An item without a report (failed, missing, unreported) scores 0.0 and passes 0 on every axis,
-- whatever the weights in effect (the formula gives 0 too: raw <= 0 when no positive is MET).
-- Incremental per run (macros/incremental_events.sql): only the runs with a new event are
-- scored again (every run after a change of scoring vars).
-- depends_on: {{ ref('stg_events') }}
{#- the scoring vars its rows depend on -#}
{%- set scoring_inputs = ['draco_penalty_floor', 'draco_weight_override_rows', 'draco_pass_threshold'] %}
{{ per_run_incremental_config() }}
with

items as (

    select * from {{ ref('int_draco_items_resolved') }}
    where true {{ only_runs_with_new_events(scoring_inputs) }}

),

rubric as (

    select * from {{ ref('int_draco_rubric_scored') }}
    where true {{ only_runs_with_new_events(scoring_inputs) }}

),

summed as (

    select * from rubric
    where not is_axis

),

axis_scores as (

    select
        run_id,
        lane,
        judge_id,
        {%- for axis, column in axes.items() %}
        any_value(score) filter (where axis = '{{ axis }}') as score_{{ column }},
        {%- endfor %}
        item_id
    from rubric
    where is_axis
    group by run_id, lane, judge_id, item_id

),

final as (

    select
        items.run_id,
        items.lane,
        items.judge_id,
        items.item_id,
        items.benchmark,
        items.dataset_sha256,
        items.position,
        items.domain,
        items.rubric_id,
        case
            when items.research_state = 'failed' then 'failed'
            when items.research_state = 'missing' then 'missing'
            when items.research_state = 'unreported' or summed.n_criteria_short > 0 then 'incomplete'
            else 'scored'
        end as status,
        items.research_state,
        items.attempt,
        items.provider,
        items.vendor_run_id,
        items.error_stage,
        items.error_class,
        items.error_message,
        coalesce(summed.n_criteria, 0) as n_criteria,
        coalesce(summed.n_criteria_judged, 0) as n_criteria_judged,
        coalesce(summed.n_samples, 0) as n_samples,
        coalesce(summed.n_samples_expected, 0) as n_samples_expected,
        coalesce(summed.n_split, 0) as n_split,
        coalesce(summed.n_unparsed_samples, 0) as n_unparsed_samples,
        coalesce(summed.n_failed_samples, 0) as n_failed_samples,
        coalesce(summed.n_retried_samples, 0) as n_retried_samples,
        coalesce(summed.n_met_overridden_samples, 0) as n_met_overridden_samples,
        coalesce(summed.raw_score, 0.0) as raw_score,
        summed.positive_weight,
        summed.negative_weight_all,
        case
            when items.research_state = 'reported'
                then {{ rubric_score('summed.raw_score', 'summed.positive_weight') }}
            else 0.0
        end as score,
        {%- for column in axes.values() %}
        axis_scores.score_{{ column }},
        {%- endfor %}
        coalesce(summed.n_passed, 0) as n_passed,
        case
            when items.research_state = 'reported' and summed.n_criteria > 0
                then cast(summed.n_passed as double) / summed.n_criteria
            else 0.0
        end as pass_rate,
        items.wall_clock_ms,
        items.queue_ms,
        items.poll_interval_s,
        items.polls,
        items.n_raw_citations,
        items.normalizer_version,
        items.stripped_bibliography,
        items.n_bibliography,
        items.cost_usd,
        items.cost_basis,
        items.price_snapshot_date,
        items.task_event_id,
        items.research_event_id,
        items.report_event_id,
        items.research_failed_event_id
    from items
    left join summed
        on items.run_id = summed.run_id
            and items.lane = summed.lane
            and items.judge_id = summed.judge_id
            and items.item_id = summed.item_id
    left join axis_scores
        on items.run_id = axis_scores.run_id
            and items.lane = axis_scores.lane
            and items.judge_id = axis_scores.judge_id
            and items.item_id = axis_scores.item_id

)

select
    *,
    {{ per_run_cursor_columns(scoring_inputs) }}
from final
