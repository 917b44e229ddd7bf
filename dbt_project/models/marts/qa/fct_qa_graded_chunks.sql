-- One row per (run_id, lane, item_id, chunk_rank): every chunk of a QA unit's resolved chunks
-- event with the UMBRELA grade it scores (int_qa_chunks_graded: the run judge's latest verdict;
-- a failed call or a chunk never judged scores 0, flagged). The threshold is applied downstream
-- (int_qa_relevance_scored), so the app's what-if re-applies it to these rows with the
-- published formulas (dim_scoring_formulas) instead of re-deriving the grades from payloads.
with

graded as (

    select * from {{ ref('int_qa_chunks_graded') }}

),

final as (

    select
        run_id,
        lane,
        item_id,
        judge_id,
        chunk_rank,
        grade,
        flagged,
        call_failed,
        relevance_event_id,
        chunks_event_id
    from graded

)

select * from final
