-- Data hygiene per (run, URL), methodology §4.1: a URL no engine fetched successfully is
-- excluded from scoring, with one reason (first that applies):
--   origin_5xx    some engine saw (or was told) the origin answered 5xx
--   redirect_only some engine hit a redirect loop / too many redirects
--   dead          every other URL no engine got content from (404, refused, DNS, timeouts)
-- A URL with no terminal event at all yet (an unfinished run) is not judged: it stays in the
-- grid and scores 0 as 'missing'.
with

pages as (

    select * from {{ ref('int_live_extraction_pages_flagged') }}

),

per_url as (

    select
        run_id,
        item_id,
        any_value(url) as url,
        any_value(vertical) as vertical,
        bool_or(raw_success) as any_raw_success,
        bool_or(outcome != 'missing') as any_terminal,
        bool_or(coalesce(target_status_code >= 500, false)) as any_origin_5xx,
        bool_or(
            coalesce(error_class ilike '%redirect%', false)
            or coalesce(error_message ilike '%redirect loop%', false)
        ) as any_redirect_failure,
        list(distinct target_status_code order by target_status_code)
        filter (where target_status_code is not null) as statuses_seen,
        list(distinct error_class order by error_class)
        filter (where error_class is not null) as error_classes,
        count(*) as engines
    from pages
    group by run_id, item_id

),

judged as (

    select
        *,
        case
            when any_raw_success or not any_terminal then null
            when any_origin_5xx then 'origin_5xx'
            when any_redirect_failure then 'redirect_only'
            else 'dead'
        end as exclusion_reason
    from per_url

)

select
    *,
    exclusion_reason is not null as excluded
from judged
