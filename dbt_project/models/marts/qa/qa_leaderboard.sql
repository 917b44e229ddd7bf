{%- set overrides = lane_price_overrides() %}
{%- set baseline = qa_baseline_lane() %}
-- One row per (run_id, lane, grader_id). Answer metrics (methodology 2.3) over the graded rows
-- N (landed rows with a label; failed rows are out and counted in failure_rate = failed /
-- attempted, attempted = landed + failed):
--   strict_accuracy = is_correct = correct / N; is_incorrect, is_not_attempted likewise;
--   accuracy_given_attempted = correct / (correct + incorrect), 0 when that is 0 (upstream);
--   f1 = harmonic mean of is_correct and accuracy_given_attempted, 0 when both are 0.
-- Retrieval / UMBRELA means over landed rows of lanes that search (zero results count 0;
-- macro qa_landed_mean, published in dim_scoring_formulas with qa_run_cost for the what-if).
-- Latency: p50 / p95 (interpolated) of the provider round trip of landed search calls; for an
-- imported file, of the file's own per-row latency (latency_source 'imported': the harness
-- timed it, we did not; 'measured' = ours; 'mixed' never arises within one run and lane).
-- Cost: usd_per_1k from scoring_var('lane_price_overrides') (basis 'override'), else for an
-- imported file whose rows state their cost 1000 x the mean per-row cost_usd over the attempted
-- rows that state one (basis 'imported': the harness's figures, not a bill or a price of ours),
-- else the lane_prices seed. run_cost_usd = usd_per_1k x attempted / 1000; for 'imported' the
-- sum of the stated costs (the file's own total: a row without a cost is not guessed).
with

answers as (

    select * from {{ ref('int_qa_answers_scored') }}

),

prices as (

    select * from {{ ref('lane_prices') }}

),

overrides as (

    {%- for lane, price in overrides.items() %}
    select
        '{{ lane | replace("'", "''") }}' as lane,
        cast({{ price }} as double) as usd_per_1k
    union all
    {%- endfor %}
    select
        cast(null as varchar) as lane,
        cast(null as double) as usd_per_1k
    where false

),

bootstrapped as (

    select * from {{ ref('int_qa_accuracy_bootstrapped') }}

),

significance as (

    select * from {{ ref('int_qa_significance_tested') }}
    where metric = 'accuracy'

),

per_lane as (

    select
        run_id,
        lane,
        grader_id,
        any_value(benchmark) as benchmark,
        any_value(series) as series,
        any_value(run_index) as run_index,
        bool_or(grader_official) as grader_official,
        count(*) as n_questions,
        count(*) filter (where landed) as n_landed,
        count(*) filter (where outcome = 'failed') as n_failed,
        count(*) filter (where label is not null) as n_graded,
        count(*) filter (where label = 'correct') as n_correct,
        count(*) filter (where label = 'incorrect') as n_incorrect,
        count(*) filter (where label = 'not_attempted') as n_not_attempted,
        {%- for metric in ['ndcg_5', 'ndcg_10', 'recall_5', 'recall_10', 'mrr'] %}
        {{ qa_landed_mean(metric) }} as {{ metric }},
        {%- endfor %}
        {%- for metric in ['hit_10', 'llm_hit_10'] %}
        {{ qa_landed_mean('cast(' ~ metric ~ ' as double)') }} as {{ metric }},
        {%- endfor %}
        {{ qa_landed_mean('llm_precision_10') }} as llm_precision_10,
        {{ stable_avg('cost_usd', order_by='sample_order, item_id',
            where="(landed or outcome = 'failed') and cost_usd is not null") }}
            as imported_cost_mean_usd,
        {{ stable_sum('cost_usd', order_by='sample_order, item_id',
            where="(landed or outcome = 'failed') and cost_usd is not null") }}
            as imported_cost_total_usd,
        quantile_cont(round_trip_ms, 0.5) filter (where landed) as latency_p50_ms,
        quantile_cont(round_trip_ms, 0.95) filter (where landed) as latency_p95_ms,
        case
            when count(distinct latency_source) filter (where landed) > 1 then 'mixed'
            else any_value(latency_source) filter (where landed)
        end as latency_source,
        list_sort(
            list_distinct(
                flatten(list([search_event_id, chunks_event_id, answer_event_id, grade_event_id]))
            )
        ) as event_ids
    from answers
    group by run_id, lane, grader_id

),

rates as (

    select
        per_lane.*,
        case
            when
                per_lane.n_landed + per_lane.n_failed > 0
                then cast(per_lane.n_failed as double) / (per_lane.n_landed + per_lane.n_failed)
        end as failure_rate,
        case when per_lane.n_graded > 0 then cast(per_lane.n_correct as double) / per_lane.n_graded end as is_correct,
        case when per_lane.n_graded > 0 then cast(per_lane.n_incorrect as double) / per_lane.n_graded end
            as is_incorrect,
        case
            when per_lane.n_graded > 0 then cast(per_lane.n_not_attempted as double) / per_lane.n_graded
        end as is_not_attempted,
        case
            when per_lane.n_graded = 0 then null
            when per_lane.n_correct + per_lane.n_incorrect > 0
                then cast(per_lane.n_correct as double) / (per_lane.n_correct + per_lane.n_incorrect)
            else 0.0
        end as accuracy_given_attempted
    from per_lane

),

final as (

    select
        rates.run_id,
        rates.benchmark,
        rates.series,
        rates.run_index,
        rates.lane,
        rates.grader_id,
        rates.grader_official,
        rates.n_questions,
        rates.n_landed,
        rates.n_failed,
        rates.failure_rate,
        rates.is_correct as strict_accuracy,
        bootstrapped.strict_accuracy_ci_low,
        bootstrapped.strict_accuracy_ci_high,
        rates.is_correct,
        rates.is_incorrect,
        rates.is_not_attempted,
        rates.accuracy_given_attempted,
        case
            when rates.is_correct + rates.accuracy_given_attempted > 0
                then 2 * rates.is_correct * rates.accuracy_given_attempted
                    / (rates.is_correct + rates.accuracy_given_attempted)
            when rates.n_graded > 0 then 0.0
        end as f1,
        rates.ndcg_5,
        rates.ndcg_10,
        rates.recall_5,
        rates.recall_10,
        rates.mrr,
        rates.hit_10,
        rates.llm_hit_10,
        rates.llm_precision_10,
        rates.latency_p50_ms,
        rates.latency_p95_ms,
        rates.latency_source,
        coalesce(
            overrides.usd_per_1k, rates.imported_cost_mean_usd * 1000.0, prices.usd_per_1k
        ) as usd_per_1k,
        case
            when overrides.lane is null and rates.imported_cost_total_usd is not null
                then rates.imported_cost_total_usd
            else {{ qa_run_cost(
                'coalesce(overrides.usd_per_1k, prices.usd_per_1k)', 'rates.n_landed', 'rates.n_failed') }}
        end as run_cost_usd,
        case
            when overrides.lane is not null or rates.imported_cost_mean_usd is null
                then prices.price_snapshot_date
        end as price_snapshot_date,
        case
            when overrides.lane is not null then 'override'
            when rates.imported_cost_mean_usd is not null then 'imported'
            else prices.basis
        end as price_basis,
        '{{ baseline | replace("'", "''") }}' as baseline_lane,
        significance.p_adjusted as accuracy_p_adjusted,
        bootstrapped.bootstrap_seed,
        rates.event_ids
    from rates
    left join prices on rates.lane = prices.lane
    left join overrides on rates.lane = overrides.lane
    left join bootstrapped
        on rates.run_id = bootstrapped.run_id
            and rates.lane = bootstrapped.lane
            and rates.grader_id = bootstrapped.grader_id
    left join significance
        on rates.run_id = significance.run_id
            and rates.lane = significance.lane
            and rates.grader_id = significance.grader_id

)

select * from final
