-- One row per (run_id, lane) of every QA run: the lane's kind, from the SystemRef the run
-- declared (settings.lane_kind): 'vendor_answer' = the vendor's own answer product
-- (collectors/qa/answer_lanes.py), graded by the run's grader; 'closed_book' = no search
-- (settings.search = null); otherwise 'search' (our synthesiser over the lane's chunks).
-- Answer lanes are never ranked with synthesised lanes unless the user asks for it.
with

lanes as (

    select * from {{ ref('int_qa_run_lanes') }}

),

declared as (

    select
        runs.run_id,
        system.value ->> 'name' as lane,
        system.value ->> '$.settings.lane_kind' as declared_kind
    from {{ ref('int_qa_runs') }} as runs, json_each(runs.systems) as system

),

final as (

    select
        lanes.run_id,
        lanes.lane,
        case
            when declared.declared_kind is not null then declared.declared_kind
            when not lanes.has_search then 'closed_book'
            else 'search'
        end as lane_kind
    from lanes
    left join declared on lanes.run_id = declared.run_id and lanes.lane = declared.lane

)

select * from final
