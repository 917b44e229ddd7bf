{%- set threshold = draco_pass_threshold() %}
-- One row per (run_id, lane, judge_id, item_id, criterion_id): the counted samples of
-- int_draco_criterion_samples with the weight in effect (int_draco_criteria_weighted) and the
-- pass threshold. A view: a rescore changes only these few expressions, and the models that
-- read it aggregate it once each, so nothing of verdict size is written again.
{{ config(materialized='view') }}

with

samples as (

    select * from {{ ref('int_draco_criterion_samples') }}

),

criteria as (

    select * from {{ ref('int_draco_criteria_weighted') }}

),

final as (

    select
        samples.run_id,
        samples.lane,
        samples.judge_id,
        samples.item_id,
        samples.criterion_id,
        samples.attempt,
        samples.research_state,
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
        samples.n_samples_expected,
        samples.n_samples,
        samples.n_samples_filled,
        samples.n_met,
        samples.v,
        samples.v_scored,
        {{ rubric_term('criteria.weight', 'samples.v_scored') }} as weighted_v,
        samples.split,
        samples.judged,
        (criteria.polarity = 'positive' and samples.v_scored >= {{ threshold }})
        or (criteria.polarity = 'negative' and samples.v_scored < {{ threshold }}) as passed,
        samples.n_unparsed_samples,
        samples.n_failed_samples,
        samples.n_flagged_samples,
        samples.flagged,
        samples.n_retried_samples,
        samples.n_met_overridden_samples,
        cast({{ threshold }} as double) as pass_threshold,
        criteria.criterion_event_id,
        samples.report_event_id,
        samples.verdict_event_ids
    from samples
    inner join criteria
        on samples.run_id = criteria.run_id
            and samples.item_id = criteria.item_id
            and samples.criterion_id = criteria.criterion_id

)

select * from final
