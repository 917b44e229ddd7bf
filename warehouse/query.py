"""Read-only access to a DuckDB file: open, query, close. Never hold a connection.

DuckDB allows one writer or many readers per file, and a process reuses an open instance
(bound to the old inode) after the file is swapped; so every query opens its own connection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb


def read_only_query(db_path: Path, sql: str, params: list[Any] | dict[str, Any] | None = None):
    """Run one parameterized query against `db_path` read-only and return a pandas DataFrame."""
    if not Path(db_path).exists():
        raise FileNotFoundError(
            f"{db_path} does not exist: run `bench demo` or `bench publish` first"
        )
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.execute(sql, params or []).df()


def list_tables(db_path: Path, schema: str = "marts") -> list[str]:
    frame = read_only_query(
        db_path,
        "select table_name from information_schema.tables where table_schema = ? order by 1",
        [schema],
    )
    return frame["table_name"].tolist()
