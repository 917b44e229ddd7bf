-- One row per chunk of a chunks_normalized event; an event with no chunks keeps one row with
-- a NULL rank, so a zero-result search is still visible downstream.
with

source as (

    {{ staged_events('chunks_normalized') }}

),

events as (

    select
        _load_id,
        event_id as chunks_event_id,
        run_id,
        occurred_at,
        payload ->> 'lane' as lane,
        payload ->> 'item_id' as item_id,
        cast(payload ->> 'attempt' as bigint) as attempt,
        payload ->> 'normalizer_version' as normalizer_version,
        payload ->> 'source_event_id' as source_event_id,
        cast(
            payload -> 'chunks' as struct(rank bigint, url varchar, title varchar, text varchar)[]
        ) as chunks
    from source

),

unnested as (

    select
        _load_id,
        chunks_event_id,
        run_id,
        occurred_at,
        lane,
        item_id,
        attempt,
        normalizer_version,
        source_event_id,
        len(chunks) as n_chunks,
        unnest(case when len(chunks) = 0 then [null] else chunks end) as chunk
    from events

),

renamed as (

    select
        unnested._load_id,
        unnested.chunks_event_id,
        unnested.run_id,
        unnested.occurred_at,
        unnested.lane,
        unnested.item_id,
        unnested.attempt,
        unnested.normalizer_version,
        unnested.source_event_id,
        unnested.n_chunks,
        chunk.rank as chunk_rank,
        chunk.url as chunk_url,
        chunk.title as chunk_title,
        chunk.text as chunk_text
    from unnested

)

select * from renamed
