"""Every query the app runs: read-only, parameterized, against the published serving snapshot.

The app reads only `$BENCH_HOME/serve.duckdb` (schema `marts`, see docs/warehouse-contract.md),
never the file dlt and dbt write. Each query opens a read-only connection, runs and closes it
(`warehouse.query.read_only_query`): all sessions share one process, and DuckDB reuses an open
instance bound to the old inode after `publish` swaps the file, so no connection may outlive a
query. Results are cached with `st.cache_data`, keyed by the snapshot file's identity (mtime,
inode, size): a new publish is picked up on the next call without any cache invalidation.

User input (dataset, run, system, item, event ids) reaches SQL only as `?` parameters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import duckdb
import pandas as pd
import streamlit as st

from warehouse.paths import BenchPaths
from warehouse.query import read_only_query

SnapshotVersion = tuple[int, int, int]
SnapshotState = Literal["missing", "empty", "unreadable", "ready"]

REQUIRED_TABLES = (
    "dim_events",
    "dim_runs",
    "dim_scoring_vars",
    "extraction_leaderboard",
    "fct_extraction_pages",
)


class SnapshotUnavailable(RuntimeError):
    """The serving snapshot vanished between the status check and a query."""


@dataclass(frozen=True)
class SnapshotStatus:
    path: Path
    state: SnapshotState
    detail: str = ""
    published_at: str | None = None
    missing_tables: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ready(self) -> bool:
        return self.state == "ready"


# --- plumbing ------------------------------------------------------------------------------


def serve_db_path() -> Path:
    return BenchPaths.from_env().serve_db


def snapshot_version(path: Path) -> SnapshotVersion | None:
    """Identity of the file behind `path`; `publish` replaces the file, so all three change."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_mtime_ns, stat.st_ino, stat.st_size)


@st.cache_data(show_spinner=False, max_entries=512)
def _cached_query(
    db_path: str, version: SnapshotVersion, sql: str, params: tuple[Any, ...]
) -> pd.DataFrame:
    del version  # only part of the cache key
    bound = [list(p) if isinstance(p, tuple) else p for p in params]
    return read_only_query(Path(db_path), sql, bound)


def _query(sql: str, *params: Any) -> pd.DataFrame:
    path = serve_db_path()
    version = snapshot_version(path)
    if version is None:
        raise SnapshotUnavailable(f"{path} does not exist")
    try:
        return _cached_query(str(path), version, sql, tuple(params))
    except FileNotFoundError as exc:  # swapped away between stat and open
        raise SnapshotUnavailable(str(exc)) from exc


def _json(value: Any) -> Any:
    """DuckDB JSON columns arrive as text; parse them, leave anything else as is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {key: (None if _is_missing(value) else value) for key, value in row.items()}
        for row in frame.to_dict(orient="records")
    ]


def _is_missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # lists and arrays are never "missing"
        return False


# --- snapshot ------------------------------------------------------------------------------

_TABLES_SQL = """
select table_schema, table_name
from information_schema.tables
where (table_schema = ? or (table_schema = 'main' and table_name = '_publish'))
order by 1, 2
"""

_ROW_COUNTS_SQL = """
select
    (select count(*) from marts.dim_runs) as runs,
    (select count(*) from marts.extraction_leaderboard) as leaderboard_rows,
    (select count(*) from marts.fct_extraction_pages) as pages
"""

_PUBLISHED_AT_SQL = "select max(published_at)::varchar as published_at from main._publish"


def snapshot_status() -> SnapshotStatus:
    """Whether there is anything to show; never raises."""
    path = serve_db_path()
    if snapshot_version(path) is None:
        return SnapshotStatus(path, "missing", "not found")
    try:
        tables = _query(_TABLES_SQL, "marts")
        marts = set(tables.loc[tables["table_schema"] == "marts", "table_name"])
        missing = tuple(t for t in REQUIRED_TABLES if t not in marts)
        if missing:
            return SnapshotStatus(
                path, "empty", "marts tables missing: " + ", ".join(missing), missing_tables=missing
            )
        counts = _query(_ROW_COUNTS_SQL).iloc[0]
        published_at = None
        if (tables["table_name"] == "_publish").any():
            published_at = _query(_PUBLISHED_AT_SQL).iloc[0]["published_at"]
    except SnapshotUnavailable as exc:
        return SnapshotStatus(path, "missing", str(exc))
    except duckdb.Error as exc:
        return SnapshotStatus(path, "unreadable", f"{type(exc).__name__}: {exc}")
    if int(counts["runs"]) == 0 and int(counts["leaderboard_rows"]) == 0:
        return SnapshotStatus(path, "empty", "the marts have no rows", published_at=published_at)
    return SnapshotStatus(
        path, "ready", published_at=None if pd.isna(published_at) else published_at
    )


_OVERVIEW_SQL = """
select
    (select count(*) from marts.dim_runs) as runs,
    (select count(distinct dataset_sha256) from marts.dim_runs) as datasets,
    (select count(distinct system) from marts.fct_extraction_pages) as systems,
    (select count(*) from marts.fct_extraction_pages) as pages,
    (select count(*) from marts.fct_extraction_pages where outcome <> 'completed') as pages_not_completed,
    (select count(*) from marts.dim_events) as events
"""


def overview_counts() -> dict[str, int]:
    row = _query(_OVERVIEW_SQL).iloc[0]
    return {key: int(value) for key, value in row.items()}


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


# --- scoring vars --------------------------------------------------------------------------

_SCORING_VARS_SQL = "select var_name, var_value from marts.dim_scoring_vars order by var_name"


def scoring_vars() -> dict[str, Any]:
    """The dbt vars in effect when the snapshot was built, values parsed from JSON."""
    frame = _query(_SCORING_VARS_SQL)
    return {row["var_name"]: _json(row["var_value"]) for row in _records(frame)}
