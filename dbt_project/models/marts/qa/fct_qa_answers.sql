-- One row per (run_id, lane, item_id) of every QA run (x grader_id: one grader per run is the
-- normal case; a run re-graded by a second grader gets a row per grader). See
-- int_qa_units_resolved / int_qa_answers_graded / int_qa_answers_scored for the rules.
with

scored as (

    select * from {{ ref('int_qa_answers_scored') }}

),

final as (

    select
        run_id,
        benchmark,
        series,
        run_index,
        dataset_sha256,
        lane,
        item_id,
        row_position,
        sample_order,
        topic,
        answer_type,
        problem,
        gold_answer,
        attempt,
        outcome,
        landed,
        answer,
        grade,
        label,
        grader_id,
        grader_official,
        grade_parse_ok,
        n_chunks,
        url_normalizer_version,
        ndcg_5,
        ndcg_10,
        recall_5,
        recall_10,
        mrr,
        hit_5,
        hit_10,
        llm_hit_10,
        llm_precision_10,
        relevance_threshold,
        queue_wait_ms,
        round_trip_ms,
        latency_source,
        whole_call_ms,
        cost_usd,
        cost_basis,
        search_event_id,
        chunks_event_id,
        answer_event_id,
        grade_event_id
    from scored

)

select * from final
