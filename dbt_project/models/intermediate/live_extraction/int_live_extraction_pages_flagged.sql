-- Raw success and non-content flags of every (run, URL, engine) of the live grid.
--   raw_success = extracted, the target's status (when seen or reported) 2xx, non-empty content
--   non_content = raw_success and a versioned rule fired (var live_non_content_rules_version;
--                 the ids of the rules that fired are kept per row)
--   consensus_candidate = raw_success and not non_content: outputs that may confirm an anchor
{%- set rules_version = scoring_var('live_non_content_rules_version') | string %}

with

grid as (

    select * from {{ ref('int_live_extraction_grid') }}

),

normalized as (

    select * from {{ ref('int_live_extraction_outputs_normalized') }}

),

joined as (

    select
        grid.*,
        normalized.normalized_output,
        normalized.normalized_output_chars,
        normalized.normalizer_version,
        grid.outcome = 'extracted'
        and coalesce(grid.target_status_code between 200 and 299, true)
        and normalized.normalized_output_chars > 0 as raw_success,
        {{ non_content_rule_ids('normalized.normalized_output', rules_version) }} as fired_rule_ids
    from grid
    inner join normalized
        on
            grid.run_id = normalized.run_id
            and grid.item_id = normalized.item_id
            and grid.system = normalized.system

),

flagged as (

    select
        * exclude (fired_rule_ids),
        case when raw_success then fired_rule_ids else '' end as non_content_rule_ids,
        raw_success and fired_rule_ids != '' as non_content,
        raw_success and fired_rule_ids = '' as consensus_candidate,
        '{{ rules_version }}' as non_content_rules_version
    from joined

)

select * from flagged
