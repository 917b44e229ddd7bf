-- Every page-level score of the extraction benchmarks, on the full grid.
{%- set threshold = number_var('useful_success_threshold', 0, 1) %}

with

pages as (

    select * from {{ ref('int_extraction_pages_gridded') }}

),

shingled as (

    select * from {{ ref('int_extraction_pages_shingled') }}

),

normalized as (

    select * from {{ ref('int_extraction_outputs_normalized') }}

),

anchor_checks as (

    select
        pages.run_id,
        pages.system,
        pages.item_id,
        unnest(pages.anchors) as anchor,
        normalized.normalized_output
    from pages
    inner join normalized
        on
            pages.run_id = normalized.run_id
            and pages.system = normalized.system
            and pages.item_id = normalized.item_id

),

anchor_hits as (

    select
        run_id,
        system,
        item_id,
        count(*) filter (where contains(normalized_output, anchor)) as anchors_found
    from anchor_checks
    group by run_id, system, item_id

),

joined as (

    select
        pages.*,
        shingled.truth_tokens,
        shingled.output_tokens,
        shingled.tp_count,
        shingled.fp_count,
        shingled.fn_count,
        shingled.tp_count + shingled.fp_count + shingled.fn_count as shingle_total,
        shingled.exact_match,
        normalized.normalized_output,
        normalized.normalized_output_chars,
        normalized.normalizer_version,
        normalized.token_recall,
        normalized.window_precision,
        coalesce(len(pages.anchors), 0) as anchors_total,
        coalesce(anchor_hits.anchors_found, 0) as anchors_found,
        pages.outcome = 'completed' and normalized.normalized_output_chars > 0 as raw_success,
        {{ non_content_rule_ids('normalized.normalized_output') }} as non_content_rule_ids
    from pages
    inner join shingled
        on
            pages.run_id = shingled.run_id
            and pages.system = shingled.system
            and pages.item_id = shingled.item_id
    inner join normalized
        on
            pages.run_id = normalized.run_id
            and pages.system = normalized.system
            and pages.item_id = normalized.item_id
    left join anchor_hits
        on
            pages.run_id = anchor_hits.run_id
            and pages.system = anchor_hits.system
            and pages.item_id = anchor_hits.item_id

),

scored as (

    select
        *,
        -- upstream divides tp, fp, fn by their sum so that every page weighs the same
        case when shingle_total > 0 then tp_count / shingle_total else 0.0 end as tp,
        case when shingle_total > 0 then fp_count / shingle_total else 0.0 end as fp,
        case when shingle_total > 0 then fn_count / shingle_total else 0.0 end as fn,
        {{ shingle_page_precision('tp_count', 'fp_count', 'fn_count') }} as page_precision,
        {{ shingle_page_recall('tp_count', 'fp_count', 'fn_count') }} as page_recall,
        -- no anchors: completeness is undefined (NULL), never a free 1.0
        case when anchors_total > 0 then anchors_found / anchors_total end as completeness,
        token_recall * window_precision as token_f1,
        raw_success and non_content_rule_ids != '' as non_content
    from joined

),

final as (

    select
        *,
        raw_success
        and not non_content
        and coalesce(completeness >= {{ threshold }}, false) as useful_success,
        -- the page's own shingle F1, the per-page value comparisons pair on: a page without a
        -- completed extraction (failed, missing) is 0, as the leaderboards count it
        case
            when outcome = 'completed' then {{ harmonic_f1('page_precision', 'page_recall') }}
            else 0.0
        end as page_f1,
        cast({{ threshold }} as double) as useful_success_threshold,
        '{{ scoring_var("non_content_rules_version") }}' as non_content_rules_version
    from scored

)

select * from final
