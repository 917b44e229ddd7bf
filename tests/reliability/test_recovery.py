"""Leftovers of killed commands are cleaned up; a corrupt warehouse is replaced by a rebuild."""

from __future__ import annotations

import duckdb
import pytest

from tests.reliability.test_run_lock import item_event
from transform import pipeline
from warehouse.paths import BenchPaths
from warehouse.publish import publish_snapshot


def _tiny_warehouse(path) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute("create schema marts")
        con.execute("create table marts.dim_x as select 1 as x")


def test_publish_removes_temporary_snapshots_of_killed_publishes(tmp_path):
    warehouse, serve = tmp_path / "warehouse.duckdb", tmp_path / "serve.duckdb"
    _tiny_warehouse(warehouse)
    orphan = tmp_path / "serve.duckdb.tmp-999999999"  # no such pid
    orphan_wal = tmp_path / "serve.duckdb.tmp-999999999.wal"
    orphan.write_bytes(b"half a snapshot")
    orphan_wal.write_bytes(b"wal")
    assert publish_snapshot(warehouse, serve, {}) == ["marts.dim_x"]
    # dbt/duckdb_tmp is the publish's spill folder (the build's, beside the warehouse): kept,
    # but empty once the publish is done.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dbt", "serve.duckdb", "warehouse.duckdb"]
    assert [p for p in (tmp_path / "dbt").rglob("*") if p.is_file()] == []


@pytest.mark.slow
def test_rebuild_replaces_a_corrupt_warehouse_and_leaves_nothing_behind(tmp_path):
    paths = BenchPaths.from_env(tmp_path / "home").ensure()
    with pipeline.event_log(paths).writer() as writer:
        writer.append([item_event(i, "run-rebuild") for i in range(3)])
    paths.warehouse_db.write_bytes(b"this is not a DuckDB file" * 100)
    (paths.home / "warehouse.rebuild.duckdb.wal").write_bytes(b"left by a killed rebuild")
    report = pipeline.rebuild(paths)
    assert report.ingest.loaded_events == 3
    assert not list(paths.home.glob("*.rebuild*"))
    with duckdb.connect(str(paths.warehouse_db), read_only=True) as con:
        assert con.execute("select count(*) from raw.events").fetchone()[0] == 3
