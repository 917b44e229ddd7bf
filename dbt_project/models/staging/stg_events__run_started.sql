with

source as (

    {{ staged_events('run_started') }}

),

renamed as (

    select
        _load_id,
        event_id as run_started_event_id,
        run_id,
        occurred_at as started_at,
        payload ->> 'benchmark' as benchmark,
        payload ->> 'source' as run_source,
        payload -> 'spec' as spec,
        payload ->> 'spec_sha256' as spec_sha256,
        payload ->> '$.dataset.name' as dataset_name,
        payload ->> '$.dataset.uri' as dataset_uri,
        payload ->> '$.dataset.sha256' as dataset_sha256,
        cast(payload ->> '$.dataset.item_count' as bigint) as dataset_item_count,
        payload ->> '$.dataset.revision' as dataset_revision,
        payload -> 'systems' as systems,
        cast(payload ->> 'seed' as bigint) as seed,
        payload -> 'argv' as argv,
        cast(payload ->> 'shard' as integer) as shard,
        cast(payload ->> 'shards' as integer) as shards,
        producer ->> 'package' as producer_package,
        producer ->> 'package_version' as package_version,
        producer ->> 'git_sha' as git_sha,
        producer ->> 'config_sha256' as config_sha256,
        content_sha256
    from source

)

select * from renamed
