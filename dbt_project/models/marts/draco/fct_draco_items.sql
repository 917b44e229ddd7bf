-- One row per (run_id, lane, judge_id, item_id) of every deep-research run: every registered
-- task x lane x judge regime (never dropped). Scores are fractions 0-1; an incomplete item's
-- score is a lower bound (unjudged criteria and samples at their least favourable verdict, P
-- over all criteria). See int_draco_items_resolved / int_draco_items_scored for the rules.
with

items as (

    select * from {{ ref('int_draco_items_scored') }}

),

final as (

    select
        run_id,
        benchmark,
        dataset_sha256,
        lane,
        provider,
        judge_id,
        item_id,
        position,
        domain,
        rubric_id,
        status,
        research_state,
        attempt,
        vendor_run_id,
        error_stage,
        error_class,
        error_message,
        n_criteria,
        n_criteria_judged,
        n_samples,
        n_samples_expected,
        n_split,
        n_unparsed_samples,
        n_failed_samples,
        n_retried_samples,
        n_met_overridden_samples,
        raw_score,
        positive_weight,
        score,
        score_factual_accuracy,
        score_breadth_and_depth_of_analysis,
        score_presentation_quality,
        score_citation_quality,
        n_passed,
        pass_rate,
        wall_clock_ms,
        queue_ms,
        poll_interval_s,
        polls,
        n_raw_citations,
        normalizer_version,
        stripped_bibliography,
        n_bibliography,
        cost_usd,
        cost_basis,
        price_snapshot_date,
        task_event_id,
        research_event_id,
        report_event_id,
        research_failed_event_id
    from items

)

select * from final
