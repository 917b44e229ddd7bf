-- One row per (run_id, lane, judge_id, scope, scope_value, metric) that an imported grading file
-- publishes about itself in its header (Valyu: overall_score -- overall_normalized_score in their
-- current code --, overall_pass_rate, domain_scores, domain_pass_rates; 0-1 fractions, taken
-- verbatim). scope 'overall' (scope_value 'all') or 'domain' (scope_value = the domain).
with

files as (

    select * from {{ ref('stg_events__imported_file_registered') }}
    where kind = 'grading'

),

overall as (

    select
        run_id,
        lane,
        judge_id,
        file_event_id,
        'overall' as scope,
        'all' as scope_value,
        'score' as metric,
        cast(coalesce(header ->> 'overall_score', header ->> 'overall_normalized_score') as double)
            as published_value
    from files
    where coalesce(header ->> 'overall_score', header ->> 'overall_normalized_score') is not null
    union all
    select
        run_id,
        lane,
        judge_id,
        file_event_id,
        'overall' as scope,
        'all' as scope_value,
        'pass_rate' as metric,
        cast(header ->> 'overall_pass_rate' as double) as published_value
    from files
    where header ->> 'overall_pass_rate' is not null

),

domains as (

    select
        files.run_id,
        files.lane,
        files.judge_id,
        files.file_event_id,
        'domain' as scope,
        entry.key as scope_value,
        'score' as metric,
        cast(entry.value as double) as published_value
    from files, json_each(files.header -> 'domain_scores') as entry
    union all
    select
        files.run_id,
        files.lane,
        files.judge_id,
        files.file_event_id,
        'domain' as scope,
        entry.key as scope_value,
        'pass_rate' as metric,
        cast(entry.value as double) as published_value
    from files, json_each(files.header -> 'domain_pass_rates') as entry

),

final as (

    select * from overall
    union all
    select * from domains

)

select * from final
