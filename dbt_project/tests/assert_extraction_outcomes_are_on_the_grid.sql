{{ config(severity='warn') }}

-- A terminal extraction event whose (run, item) was never registered, or whose run has no
-- extraction run_started, has no ground truth to score against and cannot appear in the
-- marts. It is a collector bug, not a score: warn and list it instead of dropping it silently.
select
    attempts.run_id,
    attempts.item_id,
    attempts.system,
    attempts.extraction_event_id
from {{ ref('int_extraction_attempts_resolved') }} as attempts
left join {{ ref('int_extraction_pages_gridded') }} as pages
    on
        attempts.run_id = pages.run_id
        and attempts.item_id = pages.item_id
        and attempts.system = pages.system
where pages.run_id is null
