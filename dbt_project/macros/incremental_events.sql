{#- Incremental by ingest batch (issue #8). Every staging table carries `_load_id`: dlt's
    `_dlt_load_id` of the batch that loaded the event (raw.events is insert-only on event_id, so
    a later batch only ever adds events), or, for a raw table written without dlt (test
    fixtures), the event's position in the log. A build reads only the batches it has not seen.
    Models whose SQL changed are rebuilt in full by `bench build` (transform/dbt_build.py), so an
    incremental table never keeps rows made by older SQL. -#}

{#- The cursor expression over raw.events. -#}
{% macro raw_load_id() -%}
    {%- set columns = adapter.get_columns_in_relation(source('raw', 'events')) | map(attribute='name') | list -%}
    {%- if '_dlt_load_id' in columns -%}
        _dlt_load_id
    {%- else -%}
        segment || ':' || lpad(cast(line_no as varchar), 12, '0')
    {%- endif -%}
{%- endmacro %}

{#- The largest cursor already in this model's table, as a SQL literal ('' on a first build).
    A literal, not a subquery, so DuckDB prunes the row groups of older batches. -#}
{% macro last_load_id(cursor='_load_id') -%}
    {%- if execute and is_incremental() -%}
        {%- set result = run_query('select coalesce(max(' ~ cursor ~ "), '') from " ~ this) -%}
        '{{ result.columns[0].values()[0] }}'
    {%- else -%}
        ''
    {%- endif -%}
{%- endmacro %}

{#- `and <cursor> > <last cursor>` in an incremental build, nothing otherwise. -#}
{% macro only_new_loads(cursor='_load_id') -%}
    {%- if is_incremental() %} and {{ cursor }} > {{ last_load_id(cursor) }}{% endif -%}
{%- endmacro %}

{#- For a mart that cannot carry `_load_id` (marts are compared byte for byte with a rebuild):
    the smallest cursor among `upstream` rows whose `upstream_id` is not yet in this table, as a
    literal ('~' sorts after every cursor: nothing new). Reads only the two key columns. -#}
{% macro first_unseen_load_id(upstream, upstream_id, this_id, where='true') -%}
    {%- if execute and is_incremental() -%}
        {%- set sql -%}
            select coalesce(min(u._load_id), '~') from {{ upstream }} as u
            where {{ where }} and not exists (
                select 1 from {{ this }} as t where t.{{ this_id }} = u.{{ upstream_id }}
            )
        {%- endset -%}
        '{{ run_query(sql).columns[0].values()[0] }}'
    {%- else -%}
        ''
    {%- endif -%}
{%- endmacro %}

{#- Per-run incremental models (issue #8): a model whose rows are a function of one run's
    events (and of the scoring vars) is rebuilt for the runs that got an event since its last
    build and kept for the others (`incremental_strategy='delete+insert', unique_key='run_id'`).
    Each row carries the warehouse's newest `_load_id` at the build that wrote it (so
    `last_load_id()` is that build's cursor) and the fingerprint of the scoring vars (those the
    model names) and seeds it was built with: when they differ from the active ones (a rescore, `dbt run --vars ...`,
    an edited seed), every run is rebuilt. A correction event forces a full refresh (transform/dbt_build.py). -#}
{% macro newest_load_id() -%}
    (select coalesce(max(_load_id), '') from {{ ref('stg_events') }})
{%- endmacro %}

{#- The scoring inputs a per-run model's rows depend on: the vars it names (the ones it and its
    upstream models read; naming them here also puts the model in a rescore of them,
    transform/dbt_build.py) and every seed's file checksum (weight overrides, prices). -#}
{% macro scoring_fingerprint(scoring_vars) -%}
    {%- set values = {} -%}
    {%- for name in scoring_vars -%}
        {%- do values.update({name: scoring_var(name)}) -%}
    {%- endfor -%}
    {%- for node in (graph.get('nodes') or {}).values() if node.resource_type == 'seed' -%}
        {%- do values.update({'seed:' ~ node.name: node.checksum.checksum}) -%}
    {%- endfor -%}
    '{{ local_md5(tojson(values, sort_keys=true)) }}'
{%- endmacro %}

{#- The two bookkeeping columns of a per-run incremental model's rows. -#}
{% macro per_run_cursor_columns(scoring_vars) -%}
    {{ newest_load_id() }} as _load_id,
    {{ scoring_fingerprint(scoring_vars) }} as _scoring_fingerprint
{%- endmacro %}

{#- `and <run_column> in (runs with a new event)` in an incremental build whose rows were built
    with the active scoring vars; nothing otherwise (every run). -#}
{% macro only_runs_with_new_events(scoring_vars, run_column='run_id') -%}
    {%- if execute and is_incremental() -%}
        {%- set stale = run_query(
            'select count(*) from ' ~ this ~ ' where _scoring_fingerprint <> ' ~ scoring_fingerprint(scoring_vars)
        ).columns[0].values()[0] -%}
        {%- if stale == 0 %}
        and {{ run_column }} in (
            select distinct run_id from {{ ref('stg_events') }}
            where _load_id > {{ last_load_id() }}
        )
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#- The config of a per-run incremental DRACO model: rebuilt by run, and selected by a build only
    when DRACO events arrive (transform/build_selection.py reads meta.event_types). -#}
{% macro per_run_incremental_config() -%}
    {{ config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key='run_id',
        meta={'event_types': [
            'judge_verdict', 'judge_regime_registered', 'research_completed', 'research_failed',
            'report_normalized', 'rubric_task_registered', 'rubric_criterion_registered',
        ]},
    ) }}
{%- endmacro %}
