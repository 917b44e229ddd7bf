"""Runs of every family: the `dim_runs` rows, per-system counts, failures."""

from __future__ import annotations

from typing import Any

import pandas as pd

from app.data.core import (
    _json,
    _query,
    _records,
)

# --- runs ----------------------------------------------------------------------------------

_RUNS_SQL = """
select
    run_id, benchmark, run_source, dataset_name, dataset_sha256, status,
    started_at, finished_at, n_items_registered, n_completed, n_failed
from marts.dim_runs
order by started_at desc nulls last, run_id
"""

_RUN_SQL = "select * from marts.dim_runs where run_id = ?"

# Per family, the grid mart that has one row per (run, system-or-lane, item[, grader/judge]) and
# what counts as completed / failed / missing there; items are counted once per lane whatever
# the number of graders or judges.
FAMILY_GRIDS: dict[str, tuple[str, str, str, str, str]] = {
    "extraction": (
        "fct_extraction_pages", "system",
        "outcome = 'completed'", "outcome = 'failed'", "outcome = 'missing'",
    ),
    "question answering": (
        "fct_qa_answers", "lane",
        "outcome not in ('failed', 'missing')", "outcome = 'failed'", "outcome = 'missing'",
    ),
    "deep research": (
        "fct_draco_items", "lane",
        "status in ('scored', 'incomplete')", "status = 'failed'", "status = 'missing'",
    ),
    "live extraction": (
        "fct_live_extraction_pages", "system",
        "outcome = 'completed'", "outcome = 'failed'", "outcome = 'missing'",
    ),
    "imported deep research": (
        "fct_draco_imported_items", "lane",
        "status = 'scored'", "status = 'failed'", "false",
    ),
}  # fmt: skip

_PRESENT_SQL = """
select table_name from information_schema.tables
where table_schema = 'marts' and table_name = any(?::varchar[])
"""


def _grid_sql(table: str, key: str, completed: str, failed: str, missing: str) -> str:
    # table, key and the predicates are the constants above, never user input
    return f"""
select
    {key} as system,
    count(distinct item_id) as n_items,
    count(distinct item_id) filter (where {completed}) as n_completed,
    count(distinct item_id) filter (where {failed}) as n_failed,
    count(distinct item_id) filter (where {missing}) as n_missing
from marts.{table}
where run_id = ?
group by {key}
order by {key}
"""


def _present_grids() -> dict[str, tuple[str, str, str, str, str]]:
    tables = [grid[0] for grid in FAMILY_GRIDS.values()]
    present = set(_query(_PRESENT_SQL, tables)["table_name"])
    return {family: grid for family, grid in FAMILY_GRIDS.items() if grid[0] in present}


_RUN_FAILURES_SQL = """
select system, item_id, position, url, outcome, attempt, error_class, error_message, latency_ms
from marts.fct_extraction_pages
where run_id = ? and outcome <> 'completed'
order by system, position, item_id
"""

_RUN_ERROR_CLASSES_SQL = """
select system, outcome, coalesce(error_class, '(none)') as error_class, count(*) as n_items
from marts.fct_extraction_pages
where run_id = ? and outcome <> 'completed'
group by all
order by n_items desc, system, error_class
"""


def list_runs() -> pd.DataFrame:
    """One row per run, newest first."""
    return _query(_RUNS_SQL)


def run_detail(run_id: str) -> dict[str, Any] | None:
    """The `dim_runs` row of one run, JSON columns parsed; None if the run is unknown."""
    rows = _records(_query(_RUN_SQL, run_id))
    if not rows:
        return None
    row = rows[0]
    for column in ("systems", "spec", "argv"):
        row[column] = _json(row.get(column))
    return row


def run_system_counts(run_id: str) -> pd.DataFrame:
    """Per system (extraction engine, QA lane, research system) of one run, whatever its family:
    items, completed, failed, missing, and the family."""
    frames = []
    for family, grid in _present_grids().items():
        frame = _query(_grid_sql(*grid), run_id)
        if not frame.empty:
            frames.append(frame.assign(family=family))
    if not frames:
        return pd.DataFrame(
            columns=["system", "n_items", "n_completed", "n_failed", "n_missing", "family"]
        )
    return pd.concat(frames, ignore_index=True)


def family_overview() -> pd.DataFrame:
    """One row per family with rows in the snapshot: runs, systems/lanes, items, not completed."""
    rows = []
    for family, (table, key, completed, _failed, _missing) in _present_grids().items():
        counts = _query(
            f"select count(distinct run_id) as runs, count(distinct {key}) as systems, "
            f"count(distinct (run_id, {key}, item_id)) as items, "
            f"count(distinct (run_id, {key}, item_id)) filter (where not ({completed})) "
            f"as not_completed from marts.{table}"
        ).iloc[0]
        if int(counts["runs"]):
            rows.append({"family": family, **{k: int(v) for k, v in counts.items()}})
    return pd.DataFrame(rows, columns=["family", "runs", "systems", "items", "not_completed"])


def run_failures(run_id: str) -> pd.DataFrame:
    """Every page of one run that did not complete (failed or missing), with its error."""
    return _query(_RUN_FAILURES_SQL, run_id)


def run_error_classes(run_id: str) -> pd.DataFrame:
    """Failures of one run counted by system, outcome and error class."""
    return _query(_RUN_ERROR_CLASSES_SQL, run_id)
