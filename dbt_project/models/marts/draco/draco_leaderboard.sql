{%- set axes = [
    'factual_accuracy', 'breadth_and_depth_of_analysis', 'presentation_quality', 'citation_quality'
] %}
-- One row per (run_id, lane, judge_id): judge regimes are never mixed in a row, and ranks are
-- within (run_id, judge_id). Scores are fractions 0-1 (the app shows x 100).
--   score_mean = mean item score over EVERY item of the grid (failed and missing at 0.0,
--   incomplete ones at their partial score; methodology 1.3 "failures included at 0.0"); the
--   four axis means and pass_rate_mean likewise. score_ci_* = seeded percentile bootstrap.
--   Incomplete items enter at their lower-bound score (int_draco_items_scored).
--   latency_mean_s = MEAN wall clock (submit -> result, polling included) over items whose
--   research completed ("completed items").
--   Cost: n_items_costed = completed items with a cost (billed, else a seed price);
--   cost_mean_usd averages ONLY those costed items (a completed item without any cost is not
--   counted as free), cost_total_usd sums them; cost_basis = the single basis of the costed
--   items, 'mixed' when they differ, 'partial' when some completed items have no cost at all
--   (n_items_costed < completed items: the mean does not describe the whole lane), NULL when
--   none has a cost.
--   n_met_overridden_samples = resolved samples whose recorded met disagreed with the
--   least-favourable rule (int_draco_verdicts_resolved): a buggy collector shows here.
with

items as (

    select * from {{ ref('int_draco_items_scored') }}

),

criteria_counts as (

    select
        run_id,
        lane,
        judge_id,
        count(*) filter (where is_overridden) as n_overridden_criteria,
        count(*) filter (where is_floored) as n_floored_criteria
    from {{ ref('int_draco_criteria_scored') }}
    group by run_id, lane, judge_id

),

judges as (

    select * from {{ ref('int_draco_run_judges') }}

),

runs as (

    select * from {{ ref('int_draco_runs') }}

),

bootstrapped as (

    select * from {{ ref('int_draco_scores_bootstrapped') }}

),

per_lane as (

    select
        run_id,
        lane,
        judge_id,
        any_value(benchmark) as benchmark,
        any_value(dataset_sha256) as dataset_sha256,
        min(provider) as provider,
        count(*) as n_items,
        count(*) filter (where status = 'scored') as n_scored,
        count(*) filter (where status = 'incomplete') as n_incomplete,
        count(*) filter (where status = 'failed') as n_failed,
        count(*) filter (where status = 'missing') as n_missing,
        {{ stable_avg('score', order_by='position, item_id') }} as score_mean,
        {%- for axis in axes %}
        {{ stable_avg('score_' ~ axis, order_by='position, item_id') }} as {{ axis }}_mean,
        {%- endfor %}
        {{ stable_avg('pass_rate', order_by='position, item_id') }} as pass_rate_mean,
        {{ stable_avg('wall_clock_ms / 1000.0', order_by='position, item_id',
            where="research_state in ('reported', 'unreported')") }} as latency_mean_s,
        {{ stable_avg('cost_usd', order_by='position, item_id',
            where="research_state in ('reported', 'unreported')") }} as cost_mean_usd,
        {{ stable_sum('cost_usd', order_by='position, item_id') }} as cost_total_usd,
        count(*) filter (
            where research_state in ('reported', 'unreported') and cost_usd is not null
        ) as n_items_costed,
        case
            when count(*) filter (where cost_usd is not null) = 0 then null
            when count(*) filter (
                    where research_state in ('reported', 'unreported') and cost_usd is null
                ) > 0
                then 'partial'
            when count(distinct cost_basis) = 1 then min(cost_basis)
            when count(distinct cost_basis) > 1 then 'mixed'
        end as cost_basis,
        case
            when count(distinct price_snapshot_date) = 1 then min(price_snapshot_date)
        end as price_snapshot_date,
        cast(sum(n_split) as bigint) as n_split_criteria,
        cast(sum(n_unparsed_samples) as bigint) as n_unparsed_samples,
        cast(sum(n_failed_samples) as bigint) as n_failed_samples,
        cast(sum(n_retried_samples) as bigint) as n_retried_samples,
        cast(sum(n_met_overridden_samples) as bigint) as n_met_overridden_samples,
        list_sort(
            list_distinct(
                flatten(list([research_event_id, report_event_id, research_failed_event_id]))
            )
        ) as event_ids
    from items
    group by run_id, lane, judge_id

),

final as (

    select
        per_lane.run_id,
        per_lane.benchmark,
        per_lane.dataset_sha256,
        per_lane.lane,
        per_lane.provider,
        per_lane.judge_id,
        per_lane.n_items,
        per_lane.n_scored,
        per_lane.n_incomplete,
        per_lane.n_failed,
        per_lane.n_missing,
        per_lane.score_mean,
        bootstrapped.score_ci_low,
        bootstrapped.score_ci_high,
        bootstrapped.bootstrap_seed,
        bootstrapped.bootstrap_samples,
        {%- for axis in axes %}
        per_lane.{{ axis }}_mean,
        {%- endfor %}
        per_lane.pass_rate_mean,
        per_lane.latency_mean_s,
        per_lane.cost_mean_usd,
        per_lane.cost_total_usd,
        per_lane.n_items_costed,
        per_lane.cost_basis,
        per_lane.price_snapshot_date,
        per_lane.n_split_criteria,
        per_lane.n_unparsed_samples,
        per_lane.n_failed_samples,
        per_lane.n_retried_samples,
        per_lane.n_met_overridden_samples,
        judges.judge_model,
        judges.judge_provider,
        judges.prompt_id as judge_prompt_id,
        judges.prompt_sha256 as judge_prompt_sha256,
        judges.samples as judge_samples,
        judges.judge_official,
        judges.normalizer_version,
        cast({{ draco_pass_threshold() }} as double) as pass_threshold,
        {{ draco_penalty_floor_sql() }} as penalty_floor,
        coalesce(criteria_counts.n_overridden_criteria, 0) as n_overridden_criteria,
        coalesce(criteria_counts.n_floored_criteria, 0) as n_floored_criteria,
        rank() over (
            partition by per_lane.run_id, per_lane.judge_id order by per_lane.score_mean desc
        ) as rank_score,
        runs.run_started_event_id,
        judges.regime_event_id,
        per_lane.event_ids
    from per_lane
    inner join runs on per_lane.run_id = runs.run_id
    inner join judges on per_lane.run_id = judges.run_id and per_lane.judge_id = judges.judge_id
    left join bootstrapped
        on per_lane.run_id = bootstrapped.run_id
            and per_lane.lane = bootstrapped.lane
            and per_lane.judge_id = bootstrapped.judge_id
    left join criteria_counts
        on per_lane.run_id = criteria_counts.run_id
            and per_lane.lane = criteria_counts.lane
            and per_lane.judge_id = criteria_counts.judge_id

)

select * from final
