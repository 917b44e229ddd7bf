"""Issue #25, item 5: whatever point a kill lands on, the next ingest finishes the job.

For each boundary of dlt's work (tests/ingest/killed_ingest.py) an ingest dies there in a
subprocess, more events arrive, and the next ingest must load every event of the log exactly
once and leave nothing pending; the one after it reads nothing again. Before the fix the next
ingest resumed dlt's package and ignored what was new, or (at `normalize-renamed`) failed with
`OSError: [Errno 39] Directory not empty` on every later try.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from ingest.pipeline import ingest_log, make_pipeline
from tests.ingest.killed_ingest import BOUNDARIES, KILLED
from tests.log_files import item_events
from warehouse.log import EventLog

REPO = Path(__file__).resolve().parents[2]


def append(log: EventLog, start: int, count: int) -> None:
    with log.writer() as writer:
        writer.append(item_events("run-killed-ingest", start, count, tool="killed-ingest"))


def killed_ingest(home: Path, boundary: str) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "tests" / "ingest" / "killed_ingest.py"), str(home), boundary],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == KILLED, f"{boundary} not reached: {done.stderr[-3000:]}"


def ingest(home: Path):
    return ingest_log(EventLog(home / "log"), home / "warehouse.duckdb", home / "dlt")


def rows(home: Path) -> tuple[int, int]:
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        return con.execute("select count(*), count(distinct event_id) from raw.events").fetchone()


def pending(home: Path) -> bool:
    return make_pipeline(home / "warehouse.duckdb", home / "dlt").has_pending_data


@pytest.mark.parametrize("boundary", sorted(set(BOUNDARIES) - {"abort-restoring"}))
def test_the_ingest_after_a_kill_loads_every_event_once(tmp_path, boundary):
    log = EventLog(tmp_path / "log")
    append(log, 0, 300)
    ingest(tmp_path)  # an earlier load: the kill lands on an incremental one
    append(log, 300, 200)
    killed_ingest(tmp_path, boundary)  # BOUNDARIES[boundary][4] says where dlt was left
    append(log, 500, 100)  # a collector goes on writing

    after = ingest(tmp_path)
    assert rows(tmp_path) == (600, 600)
    assert not pending(tmp_path)
    assert after.lines_read >= 100
    again = ingest(tmp_path)
    assert (again.lines_read, again.loaded_events) == (0, 0)
    assert rows(tmp_path) == (600, 600)


def test_a_kill_during_the_recovery_itself_is_recovered_too(tmp_path):
    log = EventLog(tmp_path / "log")
    append(log, 0, 300)
    killed_ingest(tmp_path, "copy-committed")  # a first load, killed while loading
    killed_ingest(tmp_path, "abort-restoring")  # the next one killed while discarding it
    append(log, 300, 100)
    ingest(tmp_path)
    assert rows(tmp_path) == (400, 400)
    assert not pending(tmp_path)
    assert ingest(tmp_path).lines_read == 0


def test_the_recovery_reports_what_it_discarded(tmp_path):
    log = EventLog(tmp_path / "log")
    append(log, 0, 50)
    killed_ingest(tmp_path, "normalize-renamed")
    recovery = ingest(tmp_path).recovery
    assert len(recovery.aborted_packages) == 1
    assert recovery.removed_folders == []  # the rename had happened: no load/new/<id> left
    assert rows(tmp_path) == (50, 50)


def test_ingests_of_one_directory_run_one_at_a_time(tmp_path):
    """Recovery discards whatever is pending, so a second ingest must wait for the first rather
    than discard the package it is loading."""
    import fcntl

    from ingest.recovery import LOCK_FILE, ingest_lock

    with (
        ingest_lock(tmp_path / "dlt"),
        open(tmp_path / "dlt" / LOCK_FILE) as handle,
        pytest.raises(BlockingIOError),
    ):
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with open(tmp_path / "dlt" / LOCK_FILE) as handle:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released afterwards
