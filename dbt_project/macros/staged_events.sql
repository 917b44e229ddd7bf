{#- Events with their payload, for the models that unpack payloads (issue #26).

    staging.stg_events holds the envelope only (one typed row per event_id, deduplicated); the
    payload JSON is kept once, in raw.events, for lineage and for the per-type models, which
    read it from there. This is the rows stg_events chose (the same event_id, segment and line)
    with raw.events's payload beside them: the columns stg_events had when it carried the
    payload, so a model written against that shape reads the same rows.

    `event_type`: one type (None = every type). `new_only`: in an incremental build, only the
    batches this model has not seen (its own `_load_id`; a model without that column passes
    false and filters by itself). The semi-join keeps stg_events's dedup without a window over
    the payloads: DuckDB builds the hash table from stg_events's key columns and streams the
    payloads of raw.events past it. Written as an explicit SEMI JOIN, not `where exists (...)`:
    DuckDB planned the EXISTS as a LEFT_DELIM_JOIN, which caches its whole left side, payloads
    included, and the 1M-verdict full build ran out of its 3GB in stg_events__judge_verdict
    ("failed to pin block ... 2.8 GiB/2.7 GiB used"). stg_events holds at most the rows of
    raw.events under the same filters, so it stays the build side. -#}
{% macro staged_events(event_type=none, new_only=true) -%}
    {%- set last = last_load_id() if new_only else "''" -%}
    {%- set incremental = new_only and is_incremental() -%}
    select
        raw_event.event_id,
        raw_event.event_type,
        raw_event.schema_version,
        raw_event.stored_schema_version,
        raw_event.run_id,
        cast(raw_event.occurred_at as timestamptz) as occurred_at,
        raw_event.producer,
        raw_event.payload,
        raw_event.content_sha256,
        raw_event.prev_sha256,
        raw_event.segment,
        raw_event.line_no,
        raw_event._load_id
    from (
        select
            *,
            {{ raw_load_id() }} as _load_id
        from {{ source('raw', 'events') }}
        {%- if event_type is not none %}
            where event_type = '{{ event_type }}'
        {%- endif %}
    ) as raw_event
    semi join (
        select
            staged.event_id,
            staged.segment,
            staged.line_no
        from {{ ref('stg_events') }} as staged
        where
            true
            {%- if event_type is not none %}
                and staged.event_type = '{{ event_type }}'
            {%- endif %}
            {%- if incremental %}
                and staged._load_id > {{ last }}
            {%- endif %}
    ) as staged
        on
            raw_event.event_id = staged.event_id
            and raw_event.segment = staged.segment
            and raw_event.line_no = staged.line_no
    {%- if incremental %}
    where raw_event._load_id > {{ last }}
    {%- endif %}
{%- endmacro %}
