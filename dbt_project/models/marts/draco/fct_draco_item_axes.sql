-- One row per (run_id, lane, judge_id, item_id, axis): the score of one rubric section (same
-- formula as the item, over the section's criteria), with the item's status and lineage.
with

axes as (

    select * from {{ ref('int_draco_rubric_scored') }}
    where is_axis

),

items as (

    select * from {{ ref('int_draco_items_scored') }}

),

final as (

    select
        axes.run_id,
        axes.lane,
        axes.judge_id,
        axes.item_id,
        items.domain,
        axes.axis,
        axes.axis_title,
        items.status,
        axes.n_criteria,
        axes.n_criteria_judged,
        axes.n_negative,
        axes.n_passed,
        axes.n_split,
        axes.n_flagged_samples,
        axes.raw_score,
        axes.positive_weight,
        axes.score,
        axes.pass_rate,
        items.task_event_id,
        items.research_event_id,
        items.report_event_id
    from axes
    inner join items
        on axes.run_id = items.run_id
            and axes.lane = items.lane
            and axes.judge_id = items.judge_id
            and axes.item_id = items.item_id

)

select * from final
