-- The URLs the live-URL benchmark excluded from scoring, one row each, with the reason and
-- the evidence (statuses seen, error classes). Counted and listed, never silently dropped.
select
    run_id,
    item_id,
    url,
    vertical,
    exclusion_reason,
    statuses_seen,
    error_classes,
    engines
from {{ ref('int_live_extraction_url_hygiene') }}
where excluded
