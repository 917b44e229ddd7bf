"""Publish by swap: copy the marts into a fresh file, then `os.replace` it onto serve.duckdb.

Readers that hold the old file keep reading the old inode; new readers see the new snapshot.
Nothing ever writes serve.duckdb in place.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

PUBLISHED_SCHEMAS = ("marts",)


def publish_snapshot(warehouse_db: Path, serve_db: Path, metadata: dict[str, Any]) -> list[str]:
    """Copy every table of the published schemas; returns the table names copied."""
    _remove_orphans(serve_db)
    tmp = serve_db.with_name(f"{serve_db.name}.tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    copied: list[str] = []
    try:
        # Connect to the warehouse (not ATTACH it): an instance dbt left open in this process
        # would make ATTACH fail with a file-handle conflict.
        with duckdb.connect(str(warehouse_db)) as con:
            quoted = str(tmp).replace("'", "''")  # ATTACH takes no parameters
            con.execute(f"attach '{quoted}' as serve")
            for schema in PUBLISHED_SCHEMAS:
                con.execute(f"create schema serve.{schema}")
                tables = con.execute(
                    "select table_name from information_schema.tables "
                    "where table_schema = ? and table_catalog = current_database() "
                    "and table_type = 'BASE TABLE' order by 1",
                    [schema],
                ).fetchall()
                for (table,) in tables:
                    con.execute(
                        f'create table serve.{schema}."{table}" as select * from {schema}."{table}"'
                    )
                    copied.append(f"{schema}.{table}")
            con.execute("create table serve.main._publish (published_at varchar, metadata json)")
            con.execute(
                "insert into serve.main._publish values (?, ?)",
                [datetime.now(UTC).isoformat(), json.dumps(metadata, sort_keys=True)],
            )
            con.execute("detach serve")
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, serve_db)
    finally:
        tmp.unlink(missing_ok=True)
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
    return copied


def _remove_orphans(serve_db: Path) -> None:
    """Temporary snapshots (and their WAL) of publishes that were killed: their pid is gone."""
    for leftover in serve_db.parent.glob(f"{serve_db.name}.tmp-*"):
        pid = leftover.name.removeprefix(f"{serve_db.name}.tmp-").split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            leftover.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def table_checksums(db_path: Path, schema: str = "marts") -> dict[str, tuple[int, str]]:
    """Order-independent (row count, content hash) per table: equal data gives equal sums."""
    sums: dict[str, tuple[int, str]] = {}
    with duckdb.connect(str(db_path), read_only=True) as con:
        tables = [
            t
            for (t,) in con.execute(
                "select table_name from information_schema.tables where table_schema = ? "
                "and table_type = 'BASE TABLE' order by 1",
                [schema],
            ).fetchall()
        ]
        for table in tables:
            count, digest = con.execute(
                f'select count(*), coalesce(sum(hash(t)), 0)::varchar from {schema}."{table}" as t'
            ).fetchone()
            sums[table] = (count, digest)
    return sums
