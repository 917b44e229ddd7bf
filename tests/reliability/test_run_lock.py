"""One writer per run: a second writer on the same run waits, then refuses naming the holder;
different runs append side by side; a writer opening never races another process's recover()."""

from __future__ import annotations

import multiprocessing
import time
from collections import Counter
from pathlib import Path

import pytest

from warehouse.events import ItemRegistered, make_event
from warehouse.log import EventLog, RunLocked
from warehouse.provenance import producer_for
from warehouse.verify import verify_log

PRODUCER = producer_for({"test": "run-lock"})
CTX = multiprocessing.get_context("fork")


def item_event(i: int, run_id: str):
    return make_event(
        ItemRegistered(
            item_id=f"item-{i}",
            dataset_sha256="0" * 64,
            position=i,
            ground_truth_text=f"text {i}",
            anchors=[f"text {i}"],
            anchor_rule_version="1",
        ),
        run_id=run_id,
        producer=PRODUCER,
    )


def _runner(log_dir: str, run_id: str, units: int, started, results) -> None:
    """A writer used without the run kernel: it plans from the log before any lock, opens a
    writer, appends unit by unit; the writer's own lock must still keep one writer per run.
    (Runners take the lock before planning: tests/reliability/test_one_writer_per_run.py.)"""
    log = EventLog(Path(log_dir))
    done = log.known_event_ids()
    work = [i for i in range(units) if item_event(i, run_id).event_id not in done]
    started.wait()
    try:
        with log.writer() as writer:
            for i in work:
                writer.append([item_event(i, run_id)])
                time.sleep(0.002)  # a unit's provider call
        results.put(("ok", len(work)))
    except RunLocked as exc:
        results.put(("refused", str(exc)))


def _race(log_dir: str, runs: list[str], units: int) -> list[tuple[str, object]]:
    started, results = CTX.Event(), CTX.Queue()
    procs = [
        CTX.Process(target=_runner, args=(log_dir, run, units, started, results)) for run in runs
    ]
    for p in procs:
        p.start()
    time.sleep(0.3)
    started.set()
    outcomes = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    return outcomes


def _line_ids(log: EventLog) -> Counter:
    return Counter(event["event_id"] for _, event in log.read(upcasted=False))


def test_two_writers_on_one_run_never_duplicate(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_RUN_LOCK_WAIT_S", "0.2")
    log_dir = tmp_path / "log"
    outcomes = _race(str(log_dir), ["run-same", "run-same"], units=300)
    kinds = sorted(kind for kind, _ in outcomes)
    assert kinds == ["ok", "refused"], outcomes
    refusal = next(detail for kind, detail in outcomes if kind == "refused")
    assert "run-same" in refusal and "pid " in refusal
    counts = _line_ids(EventLog(log_dir))
    assert len(counts) == 300
    assert [i for i, n in counts.items() if n > 1] == []
    assert verify_log(EventLog(log_dir)).intact


def test_second_writer_names_the_holders_pid(tmp_path):
    log = EventLog(tmp_path / "log")
    ready, release = CTX.Event(), CTX.Event()

    def hold() -> None:
        with EventLog(tmp_path / "log").writer() as writer:
            writer.append([item_event(0, "run-held")])
            ready.set()
            release.wait(30)

    holder = CTX.Process(target=hold)
    holder.start()
    assert ready.wait(30)
    try:
        with log.writer() as writer, pytest.raises(RunLocked) as refused:
            writer.append([item_event(1, "run-held")])
        assert f"pid {holder.pid}" in str(refused.value)
        # another run is not blocked by it
        with log.writer() as writer:
            assert writer.append([item_event(1, "run-other")]) == 1
    finally:
        release.set()
        holder.join(30)
    # released on exit: the run can be resumed
    with log.writer() as writer:
        assert writer.append([item_event(1, "run-held")]) == 1


def test_lock_is_released_when_the_holder_is_killed(tmp_path):
    ready = CTX.Event()

    def hold_forever() -> None:
        writer = EventLog(tmp_path / "log").writer()
        writer.append([item_event(0, "run-crash")])
        ready.set()
        time.sleep(60)

    holder = CTX.Process(target=hold_forever)
    holder.start()
    assert ready.wait(30)
    holder.kill()
    holder.join(30)
    log = EventLog(tmp_path / "log")
    with log.writer() as writer:
        assert writer.append([item_event(1, "run-crash")]) == 1
    assert verify_log(log).intact


def test_different_runs_append_concurrently(tmp_path):
    log_dir = tmp_path / "log"
    outcomes = _race(str(log_dir), ["run-a", "run-b"], units=150)
    assert sorted(outcomes) == [("ok", 150), ("ok", 150)]
    assert len(_line_ids(EventLog(log_dir))) == 300


def _open_and_close_writers(log_dir: str, n: int, errors) -> None:
    log = EventLog(Path(log_dir))
    try:
        for i in range(n):
            with log.writer(dedupe=False) as writer:
                writer.append([item_event(i, f"run-{i}")])
    except Exception as exc:
        errors.put(repr(exc))


def _recover_in_a_loop(log_dir: str, stop, errors) -> None:
    log = EventLog(Path(log_dir))
    try:
        while not stop.is_set():
            log.recover()
    except Exception as exc:
        errors.put(repr(exc))


def test_new_writer_never_races_another_process_recover(tmp_path):
    """Before: recover() could lock and seal a segment between its creation and its writer's
    flock; the writer then died of BlockingIOError and AttributeError: _lines."""
    log_dir = tmp_path / "log"
    log_dir.mkdir()
    stop, errors = CTX.Event(), CTX.Queue()
    recoverers = [
        CTX.Process(target=_recover_in_a_loop, args=(str(log_dir), stop, errors)) for _ in range(2)
    ]
    for p in recoverers:
        p.start()
    _open_and_close_writers(str(log_dir), 200, errors)
    stop.set()
    for p in recoverers:
        p.join(30)
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert found == []
    log = EventLog(log_dir)
    manifest = (log_dir / "MANIFEST.jsonl").read_text().splitlines()
    seals = [line for line in manifest if '"op": "seal"' in line]
    assert len(seals) == len(log.segments()) == 200  # each segment sealed exactly once
    assert verify_log(log).intact
