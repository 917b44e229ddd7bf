-- One row per (run_id, lane, item_id, grader_id): every unit of int_qa_units_resolved once per
-- grader of its run (the spec's grader plus any grader that graded an answer of the run; one
-- grader per run is the normal case). The grade is the one of the resolved answer's attempt:
--   * answer_graded of that grader (latest event on a tie) -> its grade, label, parse_ok;
--     llm IS NULL with outcome 'parsed' means graded by rule (a landed non-answer: C /
--     not_attempted); outcome 'failed' is a failed grader call: this model gives it the
--     least favourable verdict (B / incorrect, parse_ok false) and flags grade_call_failed;
--   * logs from before answer_graded v2 hold a failed grader call as provider_call_failed
--     (stage 'grade'): read here as the same failed answer_graded row of the spec's grader;
--   * rows that did not land (failed, missing) have no label: they are out of accuracy.
with

units as (

    select * from {{ ref('int_qa_units_resolved') }}

),

runs as (

    select * from {{ ref('int_qa_runs') }}

),

legacy_grade_failures as (

    select
        failed.run_id,
        failed.lane,
        failed.item_id,
        failed.attempt,
        failed.occurred_at,
        failed.call_event_id as grade_event_id,
        runs.grader_id,
        runs.grader_official,
        'failed' as outcome,
        cast(null as varchar) as grade,  -- resolved below, as a v2 failed grade is
        cast(null as varchar) as label,
        false as parse_ok,
        false as graded_by_rule
    from {{ ref('stg_events__provider_call_failed') }} as failed
    inner join runs on failed.run_id = runs.run_id
    where failed.stage = 'grade'

),

stored_grades as (

    select
        run_id,
        lane,
        item_id,
        attempt,
        occurred_at,
        grade_event_id,
        grader_id,
        grader_official,
        outcome,
        grade,
        label,
        parse_ok,
        graded_by_rule
    from {{ ref('stg_events__answer_graded') }}
    union all
    select * from legacy_grade_failures

),

resolved_grades as (

    -- The one rule for a failed grader call, in either shape: the verdict least favourable to
    -- the lane, B / incorrect, whatever grade the event stored. An unparsed completion keeps
    -- the grade the template's parse rule gave it (no letter -> C, flagged; methodology 2.3).
    select
        * replace (
            case when outcome = 'failed' then 'B' else grade end as grade,
            case when outcome = 'failed' then 'incorrect' else label end as label,
            parse_ok and outcome != 'failed' as parse_ok
        )
    from stored_grades

),

graded as (

    -- a verdict_superseded correction replaces the stored grade (int_corrections_verdicts_superseded)
    select
        graded.* replace (
            coalesce(superseded.replacement, graded.grade) as grade,
            case superseded.replacement
                when 'A' then 'correct'
                when 'B' then 'incorrect'
                when 'C' then 'not_attempted'
                else graded.label
            end as label
        )
    from resolved_grades as graded
    left join {{ ref('int_corrections_verdicts_superseded') }} as superseded
        on graded.grade_event_id = superseded.superseded_event_id
            and superseded.superseded_event_type = 'answer_graded'

),

run_graders as (

    select
        run_id,
        grader_id,
        grader_official
    from runs
    where grader_id is not null
    union
    select distinct
        run_id,
        grader_id,
        grader_official
    from graded
    where graded.run_id in (select runs.run_id from runs)

),

run_graders_unique as (

    select * from run_graders
    qualify row_number() over (
            partition by run_id, grader_id order by grader_official desc
        ) = 1

),

unit_graders as (

    select
        units.*,
        run_graders_unique.grader_id,
        run_graders_unique.grader_official
    from units
    inner join run_graders_unique on units.run_id = run_graders_unique.run_id

),

grades_of_attempt as (

    select graded.*
    from graded
    inner join unit_graders
        on graded.run_id = unit_graders.run_id
            and graded.lane = unit_graders.lane
            and graded.item_id = unit_graders.item_id
            and graded.grader_id = unit_graders.grader_id
            and graded.attempt = unit_graders.attempt
    qualify row_number() over (
            partition by graded.run_id, graded.lane, graded.item_id, graded.grader_id
            order by graded.occurred_at desc, graded.grade_event_id desc
        ) = 1

),

final as (

    select
        unit_graders.*,
        case when unit_graders.landed then grades_of_attempt.grade end as grade,
        case when unit_graders.landed then grades_of_attempt.label end as label,
        case when unit_graders.landed then grades_of_attempt.parse_ok end as grade_parse_ok,
        coalesce(
            unit_graders.landed
            and grades_of_attempt.outcome = 'parsed'
            and grades_of_attempt.graded_by_rule,
            false
        ) as graded_by_rule,
        coalesce(
            unit_graders.landed and grades_of_attempt.outcome = 'failed', false
        ) as grade_call_failed,
        case when unit_graders.landed then grades_of_attempt.grade_event_id end as grade_event_id
    from unit_graders
    left join grades_of_attempt
        on unit_graders.run_id = grades_of_attempt.run_id
            and unit_graders.lane = grades_of_attempt.lane
            and unit_graders.item_id = grades_of_attempt.item_id
            and unit_graders.grader_id = grades_of_attempt.grader_id

)

select * from final
