-- One row per deep-research run (run_started.benchmark draco | rubric): dataset and lanes as
-- configured; run_source engine | import.
with

runs as (

    select * from {{ ref('int_runs_started') }}
    where benchmark in {{ draco_benchmarks() }}

),

final as (

    select
        run_id,
        run_started_event_id,
        benchmark,
        run_source,
        dataset_name,
        dataset_sha256,
        dataset_revision,
        systems
    from runs

)

select * from final
