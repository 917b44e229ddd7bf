"""Extraction: datasets, the leaderboard, and item lineage down to the events."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from app.data.core import (
    _json,
    _query,
    _records,
)

# --- leaderboard ---------------------------------------------------------------------------

_DATASETS_SQL = """
select
    dataset_sha256,
    any_value(dataset_name order by dataset_name) as dataset_name,
    count(distinct run_id) as n_runs,
    count(distinct system) as n_systems
from marts.extraction_leaderboard
group by dataset_sha256
order by dataset_name, dataset_sha256
"""

_LEADERBOARD_SQL = """
select *
from marts.extraction_leaderboard
where dataset_sha256 = ?
order by rank_composite nulls last, composite desc nulls last, system, run_id
"""


def list_datasets() -> pd.DataFrame:
    """One row per dataset that has leaderboard rows."""
    return _query(_DATASETS_SQL)


def leaderboard(dataset_sha256: str) -> pd.DataFrame:
    """Leaderboard rows of one dataset, best composite first (all contract columns)."""
    return _query(_LEADERBOARD_SQL, dataset_sha256)


# --- item lineage --------------------------------------------------------------------------

_LINEAGE_RUNS_SQL = """
select
    pages.run_id,
    any_value(coalesce(runs.dataset_name, pages.dataset_sha256)) as dataset_name,
    any_value(runs.status) as status
from marts.fct_extraction_pages as pages
left join marts.dim_runs as runs on runs.run_id = pages.run_id
group by pages.run_id
order by max(runs.started_at) desc nulls last, pages.run_id
"""

_RUN_SYSTEM_NAMES_SQL = """
select distinct system
from marts.fct_extraction_pages
where run_id = ?
order by system
"""

_RUN_ITEMS_SQL = """
select item_id, position, outcome
from marts.fct_extraction_pages
where run_id = ? and system = ?
order by position, item_id
"""

_PAGE_SQL = """
select *
from marts.fct_extraction_pages
where run_id = ? and system = ? and item_id = ?
"""

_EVENTS_SQL = """
select
    event_id, event_type, schema_version, stored_schema_version, run_id, occurred_at,
    segment || ':' || line_no::varchar as segment_line, segment, line_no,
    content_sha256, prev_sha256, producer, payload
from marts.dim_events
where list_contains(?::varchar[], event_id)
order by occurred_at, segment, line_no
"""


def lineage_runs() -> pd.DataFrame:
    """Runs that have scored pages (run_id, dataset_name, status), newest first."""
    return _query(_LINEAGE_RUNS_SQL)


def run_system_names(run_id: str) -> list[str]:
    return _query(_RUN_SYSTEM_NAMES_SQL, run_id)["system"].tolist()


def run_items(run_id: str, system: str) -> pd.DataFrame:
    """The items one system was scored on in one run, in dataset order."""
    return _query(_RUN_ITEMS_SQL, run_id, system)


def page_score(run_id: str, system: str, item_id: str) -> dict[str, Any] | None:
    """The `fct_extraction_pages` row of one (run, system, item); None if there is none."""
    rows = _records(_query(_PAGE_SQL, run_id, system, item_id))
    return rows[0] if rows else None


def events(event_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The `dim_events` rows with these ids, oldest first, producer and payload parsed."""
    ids = tuple(dict.fromkeys(str(e) for e in event_ids if e))
    if not ids:
        return []
    rows = _records(_query(_EVENTS_SQL, ids))
    for row in rows:
        row["producer"] = _json(row.get("producer"))
        row["payload"] = _json(row.get("payload"))
    return rows
