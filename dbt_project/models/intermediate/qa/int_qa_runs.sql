-- One row per question-answering run: identity, series position and the grader / relevance
-- judge of its spec (a failed grader call carries no grader id: it is the spec's grader).
{{ config(meta={'event_types': ['run_started']}) }}

with

runs as (

    select * from ({{ staged_events('run_started', new_only=false) }}) as run_started
    where (payload ->> 'benchmark') in {{ qa_benchmarks() }}

),

final as (

    select
        run_id,
        event_id as run_started_event_id,
        payload ->> 'benchmark' as benchmark,
        payload ->> 'series' as series,
        cast(payload ->> 'run_index' as bigint) as run_index,
        payload ->> '$.dataset.sha256' as dataset_sha256,
        payload ->> '$.spec.grader.grader_id' as grader_id,
        coalesce(cast(payload ->> '$.spec.grader.official' as boolean), false) as grader_official,
        payload ->> '$.spec.relevance_judge.judge_id' as judge_id,
        payload -> 'systems' as systems
    from runs

)

select * from final
