-- One row per (run_id, lane, item_id, grader_id): every per-question score.
-- Retrieval and UMBRELA metrics exist for landed rows of lanes that search: a landed row without
-- chunks (rejected) or with zero chunks scores 0 (kept, never dropped); rows that did not land
-- and lanes without search (closed-book) have NULL retrieval metrics.
-- correct = label 'correct' (0/1, the accuracy vector of the significance tests).
with

graded as (

    select * from {{ ref('int_qa_answers_graded') }}

),

retrieval as (

    select * from {{ ref('int_qa_retrieval_scored') }}

),

runs as (

    select * from {{ ref('int_qa_runs') }}

),

relevance as (

    select * from {{ ref('int_qa_relevance_scored') }}

),

final as (

    select
        graded.run_id,
        graded.benchmark,
        graded.series,
        graded.run_index,
        graded.dataset_sha256,
        graded.lane,
        graded.item_id,
        graded.row_position,
        graded.sample_order,
        graded.topic,
        graded.answer_type,
        graded.problem,
        graded.gold_answer,
        graded.attempt,
        graded.outcome,
        graded.landed,
        graded.has_search,
        graded.answer,
        graded.grade,
        graded.label,
        graded.grader_id,
        graded.grader_official,
        graded.grade_parse_ok,
        graded.graded_by_rule,
        graded.grade_call_failed,
        case when graded.label is not null then graded.label = 'correct' end as correct,
        graded.n_chunks,
        case when graded.has_search then '{{ scoring_var("url_normalizer_version") }}' end
            as url_normalizer_version,
        {%- for metric in ['ndcg_5', 'ndcg_10', 'recall_5', 'recall_10', 'mrr'] %}
        case
            when graded.landed and graded.has_search then coalesce(retrieval.{{ metric }}, 0.0)
        end as {{ metric }},
        {%- endfor %}
        {%- for metric in ['hit_5', 'hit_10'] %}
        case
            when graded.landed and graded.has_search then coalesce(retrieval.{{ metric }}, false)
        end as {{ metric }},
        {%- endfor %}
        case
            when graded.landed and graded.has_search and runs.judge_id is not null
                then coalesce(relevance.llm_hit_10, false)
        end as llm_hit_10,
        case
            when graded.landed and graded.has_search and runs.judge_id is not null
                then coalesce(relevance.llm_precision_10, 0.0)
        end as llm_precision_10,
        cast({{ umbrela_threshold() }} as double) as relevance_threshold,
        coalesce(relevance.n_relevance_flagged, 0) as n_relevance_flagged,
        graded.queue_wait_ms,
        graded.round_trip_ms,
        graded.latency_source,
        graded.whole_call_ms,
        graded.cost_usd,
        graded.cost_basis,
        graded.search_event_id,
        graded.chunks_event_id,
        graded.answer_event_id,
        graded.grade_event_id
    from graded
    inner join runs on graded.run_id = runs.run_id
    left join retrieval
        on graded.run_id = retrieval.run_id
            and graded.lane = retrieval.lane
            and graded.item_id = retrieval.item_id
    left join relevance
        on graded.run_id = relevance.run_id
            and graded.lane = relevance.lane
            and graded.item_id = relevance.item_id

)

select * from final
