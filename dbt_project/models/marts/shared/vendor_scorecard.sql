-- One row per (family, product): who wins, at a glance (issue #27). Each family is read from
-- its own leaderboard, on the latest run that has leaderboard rows (dim_runs.started_at, then
-- run_id, as the app's run pickers order them) and, within it, the regime the leaderboard page
-- opens on:
--   qa_search / qa_answer   qa_leaderboard, official grader first then grader_id; synthesised
--                           lanes (search and the closed-book control) and a vendor's own
--                           answer lanes are ranked apart, as the QA leaderboard ranks them
--   deep_research           draco_leaderboard, official judge first then judge_id
--   extraction              extraction_leaderboard, the latest run (one dataset)
--   live_extraction         live_extraction_leaderboard, vertical 'all'
-- Headline metric, on the scale its leaderboard shows (metric_scale):
--   strict_accuracy (fraction 0-1) for QA, score x 100 (points 0-100) for deep research, the
--   composite under the active extraction_weights (fraction 0-1) for both extraction families.
--   ci_low / ci_high: the leaderboard's bootstrap interval on the same scale, NULL where the
--   leaderboard has none (the composites).
-- Cost per task (USD): QA list price per query (usd_per_1k / 1000); deep research mean cost of
--   a costed task; extraction list price per page requested (extraction_prices); NULL = not
--   measured. latency_s with latency_stat saying which statistic the leaderboard reports.
-- Winner = rank 1 by headline (ties broken by product name, as the leaderboards list them);
--   margin = winner - runner-up on the headline scale. Significance is the leaderboard's own:
--   QA the paired t-test vs the baseline lane (fct_qa_significance, metric accuracy), defined
--   only when the winner or the runner-up is that baseline; deep research the paired t-test of
--   the pair (fct_draco_significance); extraction has no test (NULL, significance_note says).
-- Lineage: event_ids = the leaderboard row's event ids; run_started_event_id = the run's.
with

runs as (

    select * from {{ ref('dim_runs') }}

),

qa_board as (

    select * from {{ ref('qa_leaderboard') }}

),

qa_latest as (

    select
        qa_board.run_id,
        qa_board.grader_id
    from qa_board
    left join runs on qa_board.run_id = runs.run_id
    group by qa_board.run_id, qa_board.grader_id, runs.started_at
    order by
        runs.started_at desc nulls last,
        qa_board.run_id asc,
        bool_and(qa_board.grader_official) desc,
        qa_board.grader_id
    limit 1

),

qa_vendors as (

    select
        run_id,
        lane,
        min(provider) as provider
    from {{ ref('stg_events__provider_call_completed') }}
    group by run_id, lane

),

qa_rows as (

    select
        case when kinds.lane_kind = 'vendor_answer' then 'qa_answer' else 'qa_search' end as family,
        coalesce(
            prices.provider,
            qa_vendors.provider,
            case when kinds.lane_kind = 'closed_book' then 'none (closed book)' end,
            'unknown'
        ) as vendor,
        qa_board.lane as product,
        case kinds.lane_kind
            when 'vendor_answer' then 'answer lane'
            when 'closed_book' then 'closed-book control'
            else 'search lane'
        end as product_kind,
        qa_board.run_id,
        qa_board.grader_id as regime,
        'strict_accuracy' as metric,
        'fraction 0-1' as metric_scale,
        qa_board.strict_accuracy as headline,
        qa_board.strict_accuracy_ci_low as ci_low,
        qa_board.strict_accuracy_ci_high as ci_high,
        qa_board.usd_per_1k / 1000.0 as cost_per_task_usd,
        qa_board.price_basis as cost_basis,
        qa_board.latency_p50_ms / 1000.0 as latency_s,
        'p50 search round trip' as latency_stat,
        qa_board.n_questions as n_items,
        qa_board.event_ids
    from qa_board
    inner join qa_latest on qa_board.run_id = qa_latest.run_id and qa_board.grader_id = qa_latest.grader_id
    left join {{ ref('int_qa_lane_kinds') }} as kinds
        on qa_board.run_id = kinds.run_id and qa_board.lane = kinds.lane
    left join {{ ref('lane_prices') }} as prices on qa_board.lane = prices.lane
    left join qa_vendors on qa_board.run_id = qa_vendors.run_id and qa_board.lane = qa_vendors.lane

),

draco_board as (

    select * from {{ ref('draco_leaderboard') }}

),

draco_latest as (

    select
        draco_board.run_id,
        draco_board.judge_id
    from draco_board
    left join runs on draco_board.run_id = runs.run_id
    group by draco_board.run_id, draco_board.judge_id, runs.started_at
    order by
        runs.started_at desc nulls last,
        draco_board.run_id asc,
        bool_and(draco_board.judge_official) desc,
        draco_board.judge_id
    limit 1

),

draco_rows as (

    select
        'deep_research' as family,
        coalesce(draco_board.provider, 'unknown') as vendor,
        draco_board.lane as product,
        'research system' as product_kind,
        draco_board.run_id,
        draco_board.judge_id as regime,
        'score' as metric,
        'points 0-100' as metric_scale,
        100 * draco_board.score_mean as headline,
        100 * draco_board.score_ci_low as ci_low,
        100 * draco_board.score_ci_high as ci_high,
        draco_board.cost_mean_usd as cost_per_task_usd,
        draco_board.cost_basis,
        draco_board.latency_mean_s as latency_s,
        'mean wall clock per task' as latency_stat,
        draco_board.n_items,
        draco_board.event_ids
    from draco_board
    inner join draco_latest
        on draco_board.run_id = draco_latest.run_id and draco_board.judge_id = draco_latest.judge_id

),

extraction_board as (

    select * from {{ ref('extraction_leaderboard') }}

),

extraction_prices as (

    select * from {{ ref('extraction_prices') }}

),

extraction_latest as (

    select extraction_board.run_id
    from extraction_board
    left join runs on extraction_board.run_id = runs.run_id
    group by extraction_board.run_id, runs.started_at
    order by runs.started_at desc nulls last, extraction_board.run_id asc
    limit 1

),

extraction_rows as (

    select
        'extraction' as family,
        coalesce(extraction_prices.provider, 'local') as vendor,
        extraction_board.system as product,
        'extraction engine' as product_kind,
        extraction_board.run_id,
        extraction_board.dataset_name as regime,
        'composite' as metric,
        'fraction 0-1' as metric_scale,
        extraction_board.composite as headline,
        cast(null as double) as ci_low,
        cast(null as double) as ci_high,
        extraction_prices.usd_per_1k_requests / 1000.0 as cost_per_task_usd,
        extraction_prices.basis as cost_basis,
        extraction_board.latency_p95_s as latency_s,
        'p95 per page' as latency_stat,
        extraction_board.n_items,
        extraction_board.event_ids
    from extraction_board
    inner join extraction_latest on extraction_board.run_id = extraction_latest.run_id
    left join extraction_prices on extraction_board.system = extraction_prices.system

),

live_board as (

    select * from {{ ref('live_extraction_leaderboard') }}
    where vertical = 'all'

),

live_latest as (

    select live_board.run_id
    from live_board
    left join runs on live_board.run_id = runs.run_id
    group by live_board.run_id, runs.started_at
    order by runs.started_at desc nulls last, live_board.run_id asc
    limit 1

),

live_events as (

    select
        pages.run_id,
        pages.system,
        list_sort(list_distinct(flatten(list(
            list_concat(
                [pages.url_event_id, pages.extraction_event_id],
                cast(pages.source_event_ids as varchar[])
            )
        )))) as event_ids
    from {{ ref('fct_live_extraction_pages') }} as pages
    inner join live_latest on pages.run_id = live_latest.run_id
    group by pages.run_id, pages.system

),

live_rows as (

    select
        'live_extraction' as family,
        coalesce(live_board.provider, 'local') as vendor,
        live_board.system as product,
        'extraction engine' as product_kind,
        live_board.run_id,
        live_board.ground_truth as regime,
        'composite' as metric,
        'fraction 0-1' as metric_scale,
        live_board.composite as headline,
        cast(null as double) as ci_low,
        cast(null as double) as ci_high,
        live_board.usd_per_1k_requests / 1000.0 as cost_per_task_usd,
        live_board.price_basis as cost_basis,
        live_board.latency_p95_s as latency_s,
        'p95 per URL' as latency_stat,
        live_board.urls_scored as n_items,
        coalesce(list_filter(live_events.event_ids, e -> e is not null), cast([] as varchar[])) as event_ids
    from live_board
    inner join live_latest on live_board.run_id = live_latest.run_id
    left join live_events on live_board.run_id = live_events.run_id and live_board.system = live_events.system

),

products as (

    select * from qa_rows
    union all by name
    select * from draco_rows
    union all by name
    select * from extraction_rows
    union all by name
    select * from live_rows

),

ranked as (

    select
        *,
        rank() over (partition by family order by headline desc nulls last) as rank_in_family,
        row_number() over (partition by family order by headline desc nulls last, product asc) as position,
        count(*) over (partition by family) as n_products
    from products

),

pairs as (

    select
        family,
        any_value(run_id) as run_id,
        any_value(regime) as regime,
        any_value(product) filter (where position = 1) as winner,
        any_value(product) filter (where position = 2) as runner_up,
        any_value(headline) filter (where position = 1)
        - any_value(headline) filter (where position = 2) as margin
    from ranked
    group by family

),

qa_tests as (

    select * from {{ ref('fct_qa_significance') }}
    where metric = 'accuracy'

),

draco_tests as (

    select * from {{ ref('fct_draco_significance') }}

),

tested as (

    select
        pairs.*,
        coalesce(qa_tests.significant, draco_tests.significant) as raw_significant,
        coalesce(qa_tests.p_adjusted, draco_tests.p_ttest_adjusted) as margin_p_adjusted,
        case
            when pairs.runner_up is null then 'no runner-up: one product in this family'
            when qa_tests.lane is not null and qa_tests.p_adjusted is not null
                then 'paired t-test vs the baseline lane ' || qa_tests.baseline_lane
                    || ', ' || qa_tests.correction || '-adjusted over ' || qa_tests.family_size
                    || ' comparison(s), ' || qa_tests.n_pairs || ' paired questions'
            when qa_tests.lane is not null
                then 'not tested: fewer than two paired questions of the two lanes'
            when draco_tests.lane_a is not null and draco_tests.p_ttest_adjusted is not null
                then 'paired t-test, ' || draco_tests.correction || '-adjusted over '
                    || draco_tests.family_size || ' lane pair(s), ' || draco_tests.n_pairs || ' paired tasks'
            when pairs.family in ('qa_search', 'qa_answer')
                then 'not tested: the QA leaderboard tests each lane against the baseline lane only, '
                    || 'and neither of these two is it'
            when pairs.family = 'deep_research' then 'not tested: fewer than two paired tasks'
            else 'not tested: this leaderboard has no significance test'
        end as significance_note
    from pairs
    left join qa_tests
        on pairs.family in ('qa_search', 'qa_answer')
            and pairs.run_id = qa_tests.run_id
            and pairs.regime = qa_tests.grader_id
            and (
                (pairs.winner = qa_tests.lane and pairs.runner_up = qa_tests.baseline_lane)
                or (pairs.runner_up = qa_tests.lane and pairs.winner = qa_tests.baseline_lane)
            )
    left join draco_tests
        on pairs.family = 'deep_research'
            and pairs.run_id = draco_tests.run_id
            and pairs.regime = draco_tests.judge_id
            and least(pairs.winner, pairs.runner_up) = draco_tests.lane_a
            and greatest(pairs.winner, pairs.runner_up) = draco_tests.lane_b

),

final as (

    select
        ranked.family,
        ranked.vendor,
        ranked.product,
        ranked.product_kind,
        ranked.run_id,
        runs.started_at as run_started_at,
        ranked.regime,
        ranked.metric,
        ranked.metric_scale,
        ranked.headline,
        ranked.ci_low,
        ranked.ci_high,
        ranked.cost_per_task_usd,
        ranked.cost_basis,
        ranked.latency_s,
        ranked.latency_stat,
        ranked.n_items,
        ranked.rank_in_family,
        ranked.n_products,
        ranked.position = 1 as is_winner,
        tested.winner,
        tested.runner_up,
        tested.margin,
        case when tested.margin_p_adjusted is not null then tested.raw_significant end as margin_significant,
        tested.margin_p_adjusted,
        tested.significance_note,
        runs.run_started_event_id,
        ranked.event_ids
    from ranked
    inner join tested on ranked.family = tested.family
    left join runs on ranked.run_id = runs.run_id

)

select * from final
