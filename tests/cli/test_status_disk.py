"""`bench status` shows the bytes on disk per part of the data root (issue #26), and the bytes
DuckDB freed but keeps inside warehouse.duckdb (what a rebuild's dropped tables leave)."""

from __future__ import annotations

import os
import re

import duckdb

from bench.status import status_rows
from warehouse.paths import BenchPaths
from warehouse.publish import parts_dir


def _megabytes(text: str, part: str) -> float:
    match = re.search(rf"\b{part} ([\d,.]+) MB", text)
    assert match, f"no {part} in {text!r}"
    return float(match.group(1).replace(",", ""))


def test_disk_row_counts_each_part_and_the_warehouses_free_blocks(tmp_path):
    paths = BenchPaths(tmp_path / "home").ensure()
    (paths.log_dir / "segment-0001.jsonl").write_bytes(b"x" * 3_000_000)
    parts_dir(paths.serve_db).mkdir()
    (parts_dir(paths.serve_db) / "marts.dim_events.0.parquet").write_bytes(b"p" * 2_000_000)
    paths.serve_db.write_bytes(b"s" * 500_000)
    paths.cache_dir.mkdir()
    (paths.cache_dir / "page.html").write_bytes(b"y" * 1_500_000)
    with duckdb.connect(str(paths.warehouse_db)) as con:
        con.execute("create schema raw")
        con.execute("create table raw.events as select range as event_id from range(10)")
        con.execute("create table dropped as select md5(range::varchar) from range(500000)")
        con.execute("checkpoint")
        con.execute("drop table dropped")
        con.execute("checkpoint")
        block_size, free_blocks = con.execute(
            "select block_size, free_blocks from pragma_database_size()"
        ).fetchone()
    assert free_blocks > 5  # the premise: the dropped table's blocks stay in the file

    disk = dict(status_rows(paths))["disk"]
    assert _megabytes(disk, "log") == 3.0
    assert _megabytes(disk, "caches") == 1.5
    warehouse_bytes = paths.warehouse_db.stat().st_size
    assert _megabytes(disk, "warehouse") == round(warehouse_bytes / 1e6, 1)
    assert f"({block_size * free_blocks / 1e6:,.1f} MB in free blocks)" in disk
    assert _megabytes(disk, "snapshot") == 2.5  # serve.duckdb and its Parquet parts
    total = _megabytes(disk, "total")
    assert abs(total - (3.0 + 1.5 + 2.5 + warehouse_bytes / 1e6)) < 0.1


def test_a_fresh_home_shows_zero_bytes_without_failing(tmp_path):
    disk = dict(status_rows(BenchPaths(tmp_path / "new")))["disk"]
    assert disk.endswith("total 0.0 MB")
    assert "free blocks" not in disk


def test_a_snapshot_cut_short_after_its_metadata_is_named_not_reported_healthy(tmp_path):
    """DuckDB opens a file whose last blocks are gone and answers the queries that do not reach
    them: `bench status` said "published …, 1 marts, 10 runs" for a serve.duckdb one block
    short. The file is shorter than the blocks its header lists, and status says so."""
    paths = BenchPaths.from_env(tmp_path).ensure()
    with duckdb.connect(str(paths.serve_db)) as con:
        con.execute("create schema marts")
        con.execute("create table marts.dim_runs as select range as run_id from range(10)")
        con.execute(
            "create table marts.big as select range as i, md5(range::varchar) as s "
            "from range(200000)"
        )
    size = paths.serve_db.stat().st_size
    block = 262144  # DuckDB's default block size
    assert dict(status_rows(paths))["serving snapshot"].endswith("2 marts, 10 runs")
    os.truncate(paths.serve_db, size - block)
    with duckdb.connect(str(paths.serve_db), read_only=True) as con:  # DuckDB still opens it
        assert con.execute("select count(*) from marts.dim_runs").fetchone() == (10,)
    shown = dict(status_rows(paths))["serving snapshot"]
    assert shown.startswith(f"{paths.serve_db} is corrupt or truncated ({size - block:,} of the")
    assert "`bench publish` writes a new one from the warehouse" in shown
