-- One row per (run_id, lane, judge_id, scope, scope_value, metric) a grading file publishes in
-- its header: the file's own figure beside our recomputation from its verdicts, under the
-- file's aggregation rules (valyu-benchmarks rubric_eval.py): overall = mean over EVERY item the
-- file lists (an errored item at 0.0); a domain = mean over that domain's items without an
-- error. difference = recomputed - published (0-1 scale); matches_4dp = equal to 4 decimals.
-- A published domain with no item of ours has recomputed NULL (so a mismatch shows).
with

figures as (

    select * from {{ ref('int_draco_imported_figures') }}

),

items as (

    select * from {{ ref('int_draco_imported_items_scored') }}

),

recomputed as (

    select
        run_id,
        lane,
        judge_id,
        'overall' as scope,
        'all' as scope_value,
        count(*) as n_items,
        {{ stable_avg('score', order_by='file_order') }} as score,
        {{ stable_avg('pass_rate', order_by='file_order') }} as pass_rate
    from items
    group by run_id, lane, judge_id
    union all
    select
        run_id,
        lane,
        judge_id,
        'domain' as scope,
        domain as scope_value,
        count(*) as n_items,
        {{ stable_avg('score', order_by='file_order') }} as score,
        {{ stable_avg('pass_rate', order_by='file_order') }} as pass_rate
    from items
    where status = 'scored'
    group by run_id, lane, judge_id, domain

),

final as (

    select
        figures.run_id,
        figures.lane,
        figures.judge_id,
        figures.scope,
        figures.scope_value,
        figures.metric,
        figures.published_value,
        case figures.metric
            when 'score' then recomputed.score
            when 'pass_rate' then recomputed.pass_rate
        end as recomputed_value,
        recomputed_value - figures.published_value as difference,
        coalesce(round(abs(recomputed_value - figures.published_value), 4) = 0, false)
            as matches_4dp,
        coalesce(recomputed.n_items, 0) as n_items,
        figures.file_event_id
    from figures
    left join recomputed
        on figures.run_id = recomputed.run_id
            and figures.lane = recomputed.lane
            and figures.judge_id = recomputed.judge_id
            and figures.scope = recomputed.scope
            and figures.scope_value = recomputed.scope_value

)

select * from final
