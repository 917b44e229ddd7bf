-- The shingle metric's raw counts per page (scrapinghub/article-extraction-benchmark):
-- \w+ tokens of the raw texts (case kept, no normalisation), the multisets of 4-token
-- shingles, and their overlap. A failed or missing page scores its prediction as ""
-- (upstream: null -> ""). With o_s, t_s the output and truth counts of shingle s:
-- tp = sum_s min(o_s, t_s), fp = sum_s o_s - tp, fn = sum_s t_s - tp.
with

pages as (

    select
        run_id,
        system,
        item_id,
        {{ word_tokens('output_text') }} as output_token_list
    from {{ ref('int_extraction_pages_gridded') }}

),

truths as (

    -- the truth is tokenised once per item, not once per system
    select
        run_id,
        item_id,
        {{ word_tokens('any_value(ground_truth_text)') }} as truth_token_list
    from {{ ref('int_extraction_pages_gridded') }}
    group by run_id, item_id

),

sides as (

    select
        run_id,
        item_id,
        'truth' as side,
        '' as system,
        truth_token_list as tokens
    from truths
    union all
    select
        run_id,
        item_id,
        'output' as side,
        system,
        output_token_list as tokens
    from pages

),

positioned_tokens as (

    -- the two unnests run in lockstep: one row per token with its 1-based position
    select
        run_id,
        item_id,
        side,
        system,
        len(tokens) as n_tokens,
        unnest(tokens) as token,
        unnest(generate_series(1, len(tokens))) as token_index
    from sides

),

shingles as (

    -- upstream: tokens[i:i + 4] for i in range(0, max(1, len(tokens) - 3)), skipping empty
    -- shingles. concat_ws drops the NULLs past the end, so a text with fewer than 4 tokens
    -- gives one shorter shingle and an empty text none. \w+ tokens never contain a space,
    -- so the joined string is an unambiguous key.
    select
        run_id,
        item_id,
        side,
        system,
        concat_ws(
            ' ',
            token,
            lead(token, 1) over text_tokens,
            lead(token, 2) over text_tokens,
            lead(token, 3) over text_tokens
        ) as shingle
    from positioned_tokens
    window text_tokens as (partition by run_id, item_id, side, system order by token_index)
    qualify token_index <= greatest(n_tokens - 3, 1)

),

shingle_counts as (

    select
        run_id,
        item_id,
        side,
        system,
        shingle,
        count(*) as n_shingles
    from shingles
    group by run_id, item_id, side, system, shingle

),

truth_counts as (

    select * from shingle_counts
    where side = 'truth'

),

output_counts as (

    select * from shingle_counts
    where side = 'output'

),

truth_totals as (

    select
        run_id,
        item_id,
        sum(n_shingles) as truth_shingles
    from truth_counts
    group by run_id, item_id

),

page_overlaps as (

    select
        output_counts.run_id,
        output_counts.system,
        output_counts.item_id,
        sum(output_counts.n_shingles) as output_shingles,
        -- coalesce first: least() ignores NULLs
        sum(least(output_counts.n_shingles, coalesce(truth_counts.n_shingles, 0))) as tp_count
    from output_counts
    left join truth_counts
        on
            output_counts.run_id = truth_counts.run_id
            and output_counts.item_id = truth_counts.item_id
            and output_counts.shingle = truth_counts.shingle
    group by output_counts.run_id, output_counts.system, output_counts.item_id

),

final as (

    select
        pages.run_id,
        pages.system,
        pages.item_id,
        len(truths.truth_token_list) as truth_tokens,
        len(pages.output_token_list) as output_tokens,
        cast(coalesce(page_overlaps.tp_count, 0) as bigint) as tp_count,
        cast(
            coalesce(page_overlaps.output_shingles, 0) - coalesce(page_overlaps.tp_count, 0) as bigint
        ) as fp_count,
        cast(
            coalesce(truth_totals.truth_shingles, 0) - coalesce(page_overlaps.tp_count, 0) as bigint
        ) as fn_count,
        truths.truth_token_list = pages.output_token_list as exact_match
    from pages
    inner join truths
        on pages.run_id = truths.run_id and pages.item_id = truths.item_id
    left join truth_totals
        on pages.run_id = truth_totals.run_id and pages.item_id = truth_totals.item_id
    left join page_overlaps
        on
            pages.run_id = page_overlaps.run_id
            and pages.system = page_overlaps.system
            and pages.item_id = page_overlaps.item_id

)

select * from final
