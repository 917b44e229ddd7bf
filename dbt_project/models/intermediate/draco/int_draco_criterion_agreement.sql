-- One row per (run_id, item_id, criterion_id): how much systems, samples and judges agree on
-- the criterion (fct_draco_criterion_agreement adds the weight in effect). Reads the counted
-- samples and the pass threshold only, so a new weight or penalty floor does not re-aggregate
-- the verdict-size rows.
-- Incremental per run, like int_draco_criterion_samples (every run after a change of
-- scoring vars, e.g. the pass threshold).
-- depends_on: {{ ref('stg_events') }}
{%- set scoring_inputs = ['draco_pass_threshold'] %}  {#- the scoring vars its rows depend on #}
{{ per_run_incremental_config() }}
{%- set threshold = draco_pass_threshold() %}
-- One row per (run_id, item_id, criterion_id) of every deep-research run: how the criterion
-- behaves across systems and judges, over the (lane, judge_id) groups that have samples of it.
--   mean_v        mean v over those groups;
--   stddev_v      sample standard deviation across systems of the per-lane v (mean over the
--                 lane's judges): which criteria split systems (NULL below 2 systems);
--   noisy_share   share of (lane, judge) groups whose samples disagree (0 < v < 1);
--   judge_disagreement_share  across judges: share of the lanes judged by 2+ judges whose
--                 judges' majority verdicts (MET when v >= var draco_pass_threshold) differ;
--                 NULL when no lane has 2+ judges.
with

criteria as (

    select * from {{ ref('int_draco_criteria_registered') }}
    where true {{ only_runs_with_new_events(scoring_inputs) }}

),

scored as (

    -- the counted samples, not int_draco_criteria_scored: agreement needs no weight, so the
    -- verdict-size rows are read without the weights joined on
    select * from {{ ref('int_draco_criterion_samples') }}
    where judged {{ only_runs_with_new_events(scoring_inputs) }}

),

per_lane as (

    select
        run_id,
        item_id,
        criterion_id,
        lane,
        {{ stable_avg('v', order_by='judge_id') }} as lane_v,
        count(*) as n_judges,
        count(distinct v >= {{ threshold }}) as n_majority_verdicts
    from scored
    group by run_id, item_id, criterion_id, lane

),

across_lanes as (

    select
        run_id,
        item_id,
        criterion_id,
        count(*) as n_systems,
        list_aggregate(list(lane_v order by lane), 'stddev_samp') as stddev_v,
        count(*) filter (where n_judges >= 2) as n_lanes_multi_judged,
        count(*) filter (where n_judges >= 2 and n_majority_verdicts > 1) as n_lanes_judges_differ
    from per_lane
    group by run_id, item_id, criterion_id

),

groups as (

    select
        run_id,
        item_id,
        criterion_id,
        count(distinct judge_id) as n_judges,
        count(*) as n_groups,
        {{ stable_avg('v', order_by='lane, judge_id') }} as mean_v,
        count(*) filter (where split) as n_noisy_groups,
        cast(sum(n_samples) as bigint) as n_samples,
        cast(sum(n_flagged_samples) as bigint) as n_flagged_samples
    from scored
    group by run_id, item_id, criterion_id

),

final as (

    select
        criteria.run_id,
        criteria.item_id,
        criteria.criterion_id,
        criteria.axis,
        criteria.requirement,
        criteria.polarity,
        criteria.registered_weight,
        coalesce(across_lanes.n_systems, 0) as n_systems,
        coalesce(groups.n_judges, 0) as n_judges,
        coalesce(groups.n_groups, 0) as n_groups,
        coalesce(groups.n_samples, 0) as n_samples,
        coalesce(groups.n_flagged_samples, 0) as n_flagged_samples,
        groups.mean_v,
        across_lanes.stddev_v,
        case
            when groups.n_groups > 0 then cast(groups.n_noisy_groups as double) / groups.n_groups
        end as noisy_share,
        case
            when across_lanes.n_lanes_multi_judged > 0
                then cast(across_lanes.n_lanes_judges_differ as double) / across_lanes.n_lanes_multi_judged
        end as judge_disagreement_share,
        criteria.criterion_event_id,
        {{ per_run_cursor_columns(scoring_inputs) }}
    from criteria
    left join groups
        on criteria.run_id = groups.run_id
            and criteria.item_id = groups.item_id
            and criteria.criterion_id = groups.criterion_id
    left join across_lanes
        on criteria.run_id = across_lanes.run_id
            and criteria.item_id = across_lanes.item_id
            and criteria.criterion_id = across_lanes.criterion_id

)

select * from final
