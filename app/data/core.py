"""Plumbing every family shares: the snapshot file, cached read-only queries, its status,
the overview counts and the scoring vars."""

from __future__ import annotations

import json
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


_LOG_VERIFICATION_SQL = """
select metadata->'log_verification' as verification from main._publish
order by published_at desc limit 1
"""


def log_verification_warning() -> str | None:
    """A banner when the snapshot was published from a log that failed verification."""
    try:
        rows = _query(_LOG_VERIFICATION_SQL)
    except (SnapshotUnavailable, duckdb.Error):
        return None
    if rows.empty or rows.iloc[0]["verification"] is None:
        return None
    verification = json.loads(rows.iloc[0]["verification"])
    if verification.get("status") != "failed":
        return None
    aside = ", ".join(verification.get("segments_set_aside") or []) or "none"
    return (
        f"The event log failed verification ({verification.get('problems')} problem(s), checked "
        f"{verification.get('checked_at')}). Segments set aside, not shown: {aside}. "
        "Run `bench verify` to see why; `bench verify --accept REASON` records an acceptance."
    )


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


# --- scoring vars --------------------------------------------------------------------------

_SCORING_VARS_SQL = "select var_name, var_value from marts.dim_scoring_vars order by var_name"


def scoring_vars() -> dict[str, Any]:
    """The dbt vars in effect when the snapshot was built, values parsed from JSON."""
    frame = _query(_SCORING_VARS_SQL)
    return {row["var_name"]: _json(row["var_value"]) for row in _records(frame)}
