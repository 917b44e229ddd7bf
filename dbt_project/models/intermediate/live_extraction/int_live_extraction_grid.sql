-- The full grid of a live-URL extraction run: every registered URL x every engine the run
-- declared. A pair with no terminal event is outcome 'missing' (scored 0, never dropped).
-- Engines of one provider share an independence group (Tavily's two depths are one extractor);
-- each local engine is its own.
with

runs as (

    select
        run_id,
        systems
    from {{ ref('int_runs_started') }}
    where benchmark = 'live_extraction'

),

declared as (

    select
        run_id,
        unnest(
            from_json(systems, '[{"name": "VARCHAR", "version": "VARCHAR", "settings": "JSON"}]')
        ) as system_ref
    from runs

),

engines as (

    select
        declared.run_id,
        declared.system_ref.name as system,
        declared.system_ref.version as system_version,
        coalesce(declared.system_ref.settings ->> 'kind', 'local') as engine_kind,
        coalesce(declared.system_ref.settings ->> 'provider', 'local:' || declared.system_ref.name) as provider
    from declared

),

urls as (

    select * from {{ ref('stg_events__live_url_registered') }}

),

terminals as (

    select *
    from {{ ref('stg_events__live_extraction_recorded') }}
    qualify row_number() over (
            partition by run_id, item_id, system order by attempt desc, extraction_event_id asc
        ) = 1

),

grid as (

    select
        urls.run_id,
        urls.item_id,
        urls.position,
        urls.url,
        urls.vertical,
        urls.render_requested as url_render_requested,
        urls.url_event_id,
        engines.system,
        engines.system_version,
        engines.engine_kind,
        engines.provider,
        coalesce(terminals.outcome, 'missing') as outcome,
        terminals.output_text,
        coalesce(terminals.output_bytes, 0) as output_bytes,
        terminals.target_status_code,
        terminals.final_url,
        terminals.render_requested,
        terminals.render_used,
        terminals.latency_ms,
        coalesce(terminals.requests_sent, 0) as requests_sent,
        terminals.error_class,
        terminals.error_message,
        terminals.extraction_event_id,
        terminals.source_event_ids
    from urls
    inner join engines on urls.run_id = engines.run_id
    left join terminals
        on
            urls.run_id = terminals.run_id
            and urls.item_id = terminals.item_id
            and engines.system = terminals.system

)

select * from grid
