-- One row per (run_id, lane, item_id) of an imported QA results file whose row states a latency
-- or a cost: the file's own per-row figures (imported_file_registered.item_figures[]):
-- latency_s (seconds as imported, whatever unit the file used) in milliseconds, and cost_usd.
-- Nothing here was timed or billed by us; the figures are the harness's own and
-- int_qa_units_resolved marks them latency_source / cost_basis = 'imported'.
with

files as (

    select * from {{ ref('stg_events__imported_file_registered') }}
    where kind = 'qa_results'

),

figures as (

    select
        files.run_id,
        files.lane,
        figure.value ->> 'item_id' as item_id,
        cast(figure.value ->> 'latency_s' as double) as latency_s,
        cast(figure.value ->> 'cost_usd' as double) as cost_usd,
        files.file_event_id
    from files, json_each(files.item_figures) as figure

),

final as (

    select
        run_id,
        lane,
        item_id,
        latency_s * 1000.0 as latency_ms,
        cost_usd,
        file_event_id
    from figures
    where latency_s is not null or cost_usd is not null
    -- one file per import run; a file registered twice in a run (never written) keeps one row
    qualify row_number() over (
            partition by run_id, lane, item_id order by file_event_id
        ) = 1

)

select * from final
