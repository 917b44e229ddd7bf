"""One writer per run, through the real runner: two processes running the same spec never
execute a unit twice. The run lock is taken before the log is read for what is done, and held
to the end, so the second process either waits and finds the run finished or is refused,
naming the holder.

Executions are counted where they happen (the lane's search, the synthesiser's and the
grader's calls), not only in the log: the writer drops an event whose id is already there, so a
unit executed twice leaves one line, and the double spend shows only in the calls.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
from collections import Counter
from functools import partial
from pathlib import Path

import pytest

import collectors.qa.run_state
from collectors.demo.extraction_corpus import build_demo_corpus, load_demo_corpus
from collectors.local_corpus import from_extraction_corpus
from collectors.qa.dataset import QaDataset
from collectors.qa.lanes import LocalBm25Lane
from collectors.qa.offline import ExtractiveSynthesizer, NormalizedMatchGrader
from collectors.qa.question_sets import DEMO_QUESTION_SET, load_question_set
from collectors.qa.runner import run_qa
from warehouse.log import EventLog, RunLocked
from warehouse.verify import verify_log

CTX = multiprocessing.get_context("fork")
UNITS = 4  # questions per run, one lane: small enough that 50 pairs stay fast
STAGES = ("search", "synthesize", "grade")  # each a paid call on a paid lane
CALLS = {"file": None}  # where this process records the calls it makes (set per run)


def _record_call(stage: str, question: str) -> None:
    """One line per call really made (O_APPEND: two processes' lines never interleave)."""
    fd = os.open(CALLS["file"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, f"{stage}\t{question}\n".encode())
    finally:
        os.close(fd)


class CountingBm25Lane(LocalBm25Lane):
    async def search(self, question: str, *, item_id: str, attempt: int):
        _record_call("search", question)
        return await super().search(question, item_id=item_id, attempt=attempt)


class CountingSynthesizer(ExtractiveSynthesizer):
    def synthesize(self, question, chunks):
        _record_call("synthesize", question)
        return super().synthesize(question, chunks)


class CountingGrader(NormalizedMatchGrader):
    def grade(self, question, target, answer):
        _record_call("grade", question)
        return super().grade(question, target, answer)


@pytest.fixture(scope="module")
def lane(tmp_path_factory) -> CountingBm25Lane:
    corpus_dir = build_demo_corpus(tmp_path_factory.mktemp("one-writer") / "corpus")
    return CountingBm25Lane(from_extraction_corpus(load_demo_corpus(corpus_dir)))


@pytest.fixture(scope="module")
def questions() -> QaDataset:
    return load_question_set(DEMO_QUESTION_SET)


def _run(log_dir: Path, lane: CountingBm25Lane, questions: QaDataset) -> dict:
    """One `bench run` of the spec: what it reports, or the refusal it prints."""
    CALLS["file"] = log_dir.parent / "calls.txt"
    try:
        summary = run_qa(
            EventLog(log_dir),
            questions,
            [lane],
            limit=UNITS,
            synthesizer=CountingSynthesizer(),
            grader=CountingGrader(),
        )
    except RunLocked as refused:
        return {"pid": os.getpid(), "refused": str(refused)}
    return {
        "pid": os.getpid(),
        "refused": None,
        "planned": summary.planned,
        "already_done": summary.skipped_existing,
        "completed": summary.completed,
        "already_finished": summary.already_finished,
    }


def _child(results, body) -> None:
    try:
        results.put(body())
    except BaseException as exc:  # a crash is an outcome the parent must see, not a hang
        results.put({"pid": os.getpid(), "crashed": repr(exc)})
        raise


def _start(results, body):
    process = CTX.Process(target=_child, args=(results, body))
    process.start()
    return process


def _finish(processes, results) -> list[dict]:
    outcomes = [results.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(30)
    assert [o for o in outcomes if "crashed" in o] == []
    return outcomes


def _executions(pair_dir: Path) -> Counter:
    """Calls made per (stage, question), by both processes."""
    calls = pair_dir / "calls.txt"
    lines = calls.read_text().splitlines() if calls.exists() else []
    return Counter(tuple(line.split("\t")) for line in lines)


def _terminal_events(log_dir: Path) -> Counter:
    """The events that end each paid stage, per (item, lane, stage), in the log."""
    stage_of = {
        "provider_call_completed": "search",
        "provider_call_failed": "search",
        "answer_synthesized": "synthesize",
        "answer_graded": "grade",
    }
    return Counter(
        (e["payload"]["item_id"], e["payload"]["lane"], stage_of[e["event_type"]])
        for _raw, e in EventLog(log_dir).read()
        if e["event_type"] in stage_of
    )


def _assert_one_execution_per_unit(pair_dir: Path, outcomes: list[dict]) -> None:
    executions = _executions(pair_dir)
    assert len(executions) == UNITS * len(STAGES), executions
    assert set(executions.values()) == {1}, executions
    terminal = _terminal_events(pair_dir / "log")
    assert len(terminal) == UNITS * len(STAGES) and set(terminal.values()) == {1}, terminal
    assert sum(o.get("completed", 0) for o in outcomes) == UNITS, outcomes
    assert verify_log(EventLog(pair_dir / "log")).intact


def test_fifty_same_spec_pairs_never_execute_a_unit_twice(tmp_path, monkeypatch, lane, questions):
    # Long enough that the second of a pair always outwaits the first (a run takes ~0.1 s).
    monkeypatch.setenv("BENCH_RUN_LOCK_WAIT_S", "20")
    started = time.monotonic()
    doubled: list[tuple[int, Counter]] = []
    not_waited: list[tuple[int, list[dict]]] = []
    for pair in range(50):
        pair_dir = tmp_path / f"pair-{pair}"
        pair_dir.mkdir()
        go, results = CTX.Event(), CTX.Queue()

        def body(pair_dir=pair_dir, go=go, delay_s=0.0):
            go.wait(30)
            time.sleep(delay_s)
            return _run(pair_dir / "log", lane, questions)

        # The second starts 0-135 ms after the first (a run takes ~100 ms): at once, while
        # the first plans, while it runs, as it ends, after it ended.
        delay_s = (pair % 10) * 0.015
        processes = [_start(results, body), _start(results, partial(body, delay_s=delay_s))]
        go.set()
        outcomes = _finish(processes, results)
        repeated = {call: n for call, n in _executions(pair_dir).items() if n > 1}
        if repeated:
            doubled.append((pair, repeated))
            continue
        _assert_one_execution_per_unit(pair_dir, outcomes)
        first, second = sorted(outcomes, key=lambda o: o.get("completed", 0), reverse=True)
        assert (first["planned"], first["already_done"], first["completed"]) == (UNITS, 0, UNITS)
        # The second waited for the first, then found every unit done.
        if not (second.get("already_finished") and second["already_done"] == UNITS):
            not_waited.append((pair, outcomes))
    assert doubled == [], f"{len(doubled)} of 50 pairs executed units twice: {doubled[:3]}"
    assert not_waited == [], f"{len(not_waited)} of 50 pairs: {not_waited[:3]}"
    assert time.monotonic() - started < 60


@contextlib.contextmanager
def _pausing_after_the_state_is_read(planned, resume):
    """While inside: this process, once it has read the run's state from the log, says so and
    waits for `resume` before going on (the moment the old race needed)."""
    real = collectors.qa.run_state.fold_log

    def fold_then_pause(log, run_id, record):
        real(log, run_id, record)
        planned.set()
        assert resume.wait(30)

    collectors.qa.run_state.fold_log = fold_then_pause
    try:
        yield
    finally:
        collectors.qa.run_state.fold_log = real


def test_a_second_run_planning_while_the_first_runs_is_refused(
    tmp_path, monkeypatch, lane, questions
):
    """The old interleaving, forced: B reads what is done (nothing), then A runs; B must not
    then execute what A has executed. Before the fix B planned without the lock, A ran every
    unit, and B ran every unit again (each search twice, both reporting `completed 4`)."""
    monkeypatch.setenv("BENCH_RUN_LOCK_WAIT_S", "0.3")
    b_planned, a_done, results = CTX.Event(), CTX.Event(), CTX.Queue()

    def process_b():
        with _pausing_after_the_state_is_read(b_planned, a_done):
            return _run(tmp_path / "log", lane, questions)

    def process_a():
        assert b_planned.wait(30)
        try:
            return _run(tmp_path / "log", lane, questions)
        finally:
            a_done.set()

    b = _start(results, process_b)
    a = _start(results, process_a)
    outcomes = {o["pid"]: o for o in _finish([b, a], results)}
    _assert_one_execution_per_unit(tmp_path, list(outcomes.values()))
    assert outcomes[b.pid]["completed"] == UNITS
    # A came while B held the run: refused, naming B, with nothing written or called.
    refusal = outcomes[a.pid]["refused"]
    assert refusal is not None and f"pid {b.pid}" in refusal, outcomes[a.pid]


def test_a_second_run_waits_for_the_first_and_finds_it_finished(
    tmp_path, monkeypatch, lane, questions
):
    """With a wait longer than the run, the second process waits, then reads the finished run:
    `already done 4 · completed 0`, and calls nothing."""
    monkeypatch.setenv("BENCH_RUN_LOCK_WAIT_S", "20")
    b_planned, results = CTX.Event(), CTX.Queue()
    never = CTX.Event()
    never.set()  # B does not pause: it only says when it has read the state

    def process_b():
        with _pausing_after_the_state_is_read(b_planned, never):
            return _run(tmp_path / "log", lane, questions)

    def process_a():
        assert b_planned.wait(30)
        return _run(tmp_path / "log", lane, questions)

    b = _start(results, process_b)
    a = _start(results, process_a)
    outcomes = {o["pid"]: o for o in _finish([b, a], results)}
    _assert_one_execution_per_unit(tmp_path, list(outcomes.values()))
    assert outcomes[b.pid]["completed"] == UNITS
    waited = outcomes[a.pid]
    assert waited["already_finished"] and (waited["already_done"], waited["completed"]) == (
        UNITS,
        0,
    )
