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

_RUN_SYSTEMS_SQL = """
select
    system,
    any_value(system_version order by system_version) as system_version,
    count(*) as n_items,
    count(*) filter (where outcome = 'completed') as n_completed,
    count(*) filter (where outcome = 'failed') as n_failed,
    count(*) filter (where outcome = 'missing') as n_missing
from marts.fct_extraction_pages
where run_id = ?
group by system
order by system
"""

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
    """Per system of one run: items scored, completed, failed, missing."""
    return _query(_RUN_SYSTEMS_SQL, run_id)


def run_failures(run_id: str) -> pd.DataFrame:
    """Every page of one run that did not complete (failed or missing), with its error."""
    return _query(_RUN_FAILURES_SQL, run_id)


def run_error_classes(run_id: str) -> pd.DataFrame:
    """Failures of one run counted by system, outcome and error class."""
    return _query(_RUN_ERROR_CLASSES_SQL, run_id)
