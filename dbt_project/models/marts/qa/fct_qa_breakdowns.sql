-- One row per (run_id, lane, grader_id, dimension, value), dimension topic | answer_type:
-- n_questions (all rows of the group) and strict accuracy over its graded rows (NULL when none).
-- A question without the dimension's value is grouped under '(none)'.
with

answers as (

    select * from {{ ref('int_qa_answers_scored') }}

),

dimensions as (

    select
        run_id,
        lane,
        grader_id,
        'topic' as dimension,
        coalesce(topic, '(none)') as value,
        label
    from answers
    union all
    select
        run_id,
        lane,
        grader_id,
        'answer_type' as dimension,
        coalesce(answer_type, '(none)') as value,
        label
    from answers

),

final as (

    select
        run_id,
        lane,
        grader_id,
        dimension,
        value,
        count(*) as n_questions,
        case
            when count(*) filter (where label is not null) > 0
                then cast(count(*) filter (where label = 'correct') as double)
                    / count(*) filter (where label is not null)
        end as strict_accuracy
    from dimensions
    group by run_id, lane, grader_id, dimension, value

)

select * from final
