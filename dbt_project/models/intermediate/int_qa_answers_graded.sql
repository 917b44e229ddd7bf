-- One row per (run_id, lane, item_id, grader_id): every unit of int_qa_units_resolved once per
-- grader of its run (the spec's grader plus any grader that graded an answer of the run; one
-- grader per run is the normal case). The grade is the one of the resolved answer's attempt:
--   * answer_graded of that grader (latest event on a tie) -> its grade, label, parse_ok;
--     llm IS NULL means graded by rule (a landed non-answer: C / not_attempted);
--   * else a failed grader call (provider_call_failed stage 'grade', the spec's grader) -> the
--     least favourable verdict: B / incorrect, grade_parse_ok = false, grade_call_failed flag;
--   * rows that did not land (failed, missing) have no label: they are out of accuracy.
with

units as (

    select * from {{ ref('int_qa_units_resolved') }}

),

runs as (

    select * from {{ ref('int_qa_runs') }}

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
    from {{ ref('stg_events__answer_graded') }} as graded
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

grade_failures as (

    select
        failed.run_id,
        failed.lane,
        failed.item_id,
        failed.attempt,
        runs.grader_id,
        failed.call_event_id
    from {{ ref('stg_events__provider_call_failed') }} as failed
    inner join runs on failed.run_id = runs.run_id
    where failed.stage = 'grade'
    qualify row_number() over (
            partition by failed.run_id, failed.lane, failed.item_id, failed.attempt
            order by failed.occurred_at desc, failed.call_event_id desc
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
        case
            when not unit_graders.landed then null
            when grades_of_attempt.grade_event_id is not null then grades_of_attempt.grade
            when grade_failures.call_event_id is not null then 'B'
        end as grade,
        case
            when not unit_graders.landed then null
            when grades_of_attempt.grade_event_id is not null then grades_of_attempt.label
            when grade_failures.call_event_id is not null then 'incorrect'
        end as label,
        case
            when not unit_graders.landed then null
            when grades_of_attempt.grade_event_id is not null then grades_of_attempt.parse_ok
            when grade_failures.call_event_id is not null then false
        end as grade_parse_ok,
        coalesce(grades_of_attempt.graded_by_rule, false) as graded_by_rule,
        unit_graders.landed
        and grades_of_attempt.grade_event_id is null
        and grade_failures.call_event_id is not null as grade_call_failed,
        case
            when unit_graders.landed
                then coalesce(grades_of_attempt.grade_event_id, grade_failures.call_event_id)
        end as grade_event_id
    from unit_graders
    left join grades_of_attempt
        on unit_graders.run_id = grades_of_attempt.run_id
            and unit_graders.lane = grades_of_attempt.lane
            and unit_graders.item_id = grades_of_attempt.item_id
            and unit_graders.grader_id = grades_of_attempt.grader_id
    left join grade_failures
        on unit_graders.run_id = grade_failures.run_id
            and unit_graders.lane = grade_failures.lane
            and unit_graders.item_id = grade_failures.item_id
            and unit_graders.attempt = grade_failures.attempt
            and unit_graders.grader_id = grade_failures.grader_id

)

select * from final
