"""Incremental builds after several appends give the marts a rebuild from the log gives.

The DRACO fixture's events (real tasks, retried judge samples, a second judge regime) reach the
warehouse in three appends, each followed by `bench ingest` + `bench build` (incremental: only the
new ingest batch is read). The judge retries (judge_attempt 2) come in the last append, after
the samples they supersede were built, so the per-sample resolution must be redone for them.
Then `bench rebuild` (a fresh warehouse from the log, full builds) must give identical marts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest

from tests.bench_cli import run_bench
from warehouse import publish
from warehouse.log import EventLog
from warehouse.publish import snapshot_parts, table_checksums

HERE = Path(__file__).resolve().parent
for path in (HERE.parent / "dbt_draco", HERE.parent / "dbt"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from draco_fixture import build_fixture  # noqa: E402

pytestmark = pytest.mark.slow


def bench(home: Path, *args: str) -> str:
    return run_bench(home, *args).output


def _appends(events):
    retries = [
        e
        for e in events
        if e.event_type == "judge_verdict" and e.payload.get("judge_attempt", 1) > 1
    ]
    retry_ids = {e.event_id for e in retries}
    rest = [e for e in events if e.event_id not in retry_ids]
    # three appends keep what four did (an incremental build on top of an incremental one, and
    # retries after the samples they supersede were built) at one ingest + build less
    half = len(rest) // 2
    return [rest[:half], rest[half:], retries]


def test_several_incremental_appends_then_rebuild_give_identical_marts(tmp_path, monkeypatch):
    # every mart a Parquet part: dim_events is then published by increments (warehouse/publish.py)
    monkeypatch.setattr(publish, "PART_MIN_ROWS", 1)
    fixture = build_fixture()
    appends = _appends(fixture.events)
    assert all(appends) and len(appends[-1]) > 5  # the retries exist and come last
    home = tmp_path / "home"
    log = EventLog(home / "log")
    counts, event_parts = [], []
    for batch in appends:
        with log.writer() as writer:
            writer.append(batch)
        bench(home, "ingest")
        bench(home, "build")
        bench(home, "publish")
        # the snapshot holds the build, dim_events as one more part per publish
        assert table_checksums(home / "serve.duckdb") == table_checksums(home / "warehouse.duckdb")
        event_parts.append(len(snapshot_parts(home / "serve.duckdb")["marts.dim_events"]))
        with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
            counts.append(
                con.execute(
                    "select count(*), count(distinct _load_id) from staging.stg_events"
                ).fetchone()
            )
            retried = con.execute(
                "select count(*) from intermediate.int_draco_verdicts_resolved "
                "where judge_attempt > 1"
            ).fetchone()[0]
    # every append is its own ingest batch, kept apart by the incremental staging table
    assert [batches for _, batches in counts] == [1, 2, 3]
    assert event_parts == [1, 2, 3]
    assert counts[-1][0] == len(fixture.events)
    assert retried == len(appends[-1])  # the retries replaced the attempts they supersede

    incremental = table_checksums(home / "warehouse.duckdb")
    assert incremental["fct_draco_verdict_samples"][0] == sum(
        1 for e in fixture.events if e.event_type == "judge_verdict"
    )
    bench(home, "rebuild")
    assert table_checksums(home / "warehouse.duckdb") == incremental
    # a rebuilt warehouse is a new generation: its events are published whole, as one part
    assert len(snapshot_parts(home / "serve.duckdb")["marts.dim_events"]) == 1
    assert table_checksums(home / "serve.duckdb") == incremental
