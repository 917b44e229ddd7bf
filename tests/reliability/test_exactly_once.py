"""Exactly-once ingest: whatever an interrupted load left in raw.events, the next ingest leaves
every event id there once; kill -9 during loads never loses or duplicates an id."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import duckdb
import pytest

from ingest.pipeline import ingest_log
from warehouse.log import EventLog

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("reliability", REPO / "benchmarks" / "reliability.py")
reliability = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reliability)


def _counts(db: Path) -> tuple[int, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("select count(*), count(distinct event_id) from raw.events").fetchone()


def test_rows_a_resumed_load_inserted_twice_are_removed(tmp_path):
    """What a kill after dlt's staging insert committed leaves: the job's rows twice."""
    log = EventLog(tmp_path / "log")
    reliability.append_batch(log.log_dir, 0, 500)
    db, dlt_dir = tmp_path / "warehouse.duckdb", tmp_path / "dlt"
    ingest_log(log, db, dlt_dir)
    with duckdb.connect(str(db)) as con:
        con.execute("insert into raw.events select * from raw.events where line_no % 2 = 0")
    assert _counts(db) == (750, 500)
    reliability.append_batch(log.log_dir, 500, 100)
    result = ingest_log(log, db, dlt_dir)
    assert result.duplicates_removed == 250
    assert _counts(db) == (600, 600)


@pytest.mark.slow
def test_kill_during_ingest_leaves_every_id_once():
    figures = reliability.kill_loop(kills=4, batch=5000, rng=random.Random(3))
    assert figures["lost"] == 0 and figures["duplicated"] == 0, figures
