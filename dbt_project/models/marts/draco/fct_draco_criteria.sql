-- One row per (run_id, lane, judge_id, item_id, criterion_id): v over the resolved samples
-- present, v_scored with the missing samples at their least favourable verdict (what scores:
-- weighted_v = weight * v_scored, passed), split / flagged, the weights (registered and in
-- effect) and the verdict event ids.
with

criteria as (

    select * from {{ ref('int_draco_criteria_scored') }}

),

final as (

    select
        run_id,
        lane,
        judge_id,
        item_id,
        criterion_id,
        attempt,
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
        weighted_v,
        split,
        judged,
        passed,
        pass_threshold,
        n_unparsed_samples,
        n_failed_samples,
        n_retried_samples,
        n_met_overridden_samples,
        flagged,
        criterion_event_id,
        report_event_id,
        verdict_event_ids
    from criteria

)

select * from final
