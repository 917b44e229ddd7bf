"""The run kernel on its own: a tiny family of stages over a real event log."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from collectors.runs.kernel import RunContext, RunStages, fold_log, run_kernel
from collectors.runs.messages import truncate_message
from warehouse.events import ExtractionFailed, Producer, RunFinished, RunStarted
from warehouse.log import EventLog
from warehouse.verify import verify_log

PRODUCER = Producer(package_version="0", git_sha="0" * 40, config_sha256="0" * 64)
RUN_ID = "run-kernel-test"
ITEMS = [f"item-{n}" for n in range(6)]


class Boom(RuntimeError):
    pass


class CountingStages(RunStages[str]):
    """One terminal event per item; the log is read back for what is done."""

    def __init__(self, log: EventLog, *, cost_per_unit: float = 0.0, crash_on: str | None = None):
        self.done: set[str] = set()
        self.finished_at: set[int] = set()
        self.cost_per_unit = cost_per_unit
        self.crash_on = crash_on
        self.processed: list[str] = []

    def load_state(self, log: EventLog) -> None:
        fold_log(log, RUN_ID, self.record)

    def record(self, event: dict[str, Any]) -> None:
        if event["event_type"] == "extraction_failed":
            self.done.add(event["payload"]["item_id"])
        elif event["event_type"] == "run_finished":
            self.finished_at.add(event["payload"]["terminal_events"])

    def remaining(self) -> list[str]:
        return [item for item in ITEMS if item not in self.done]

    def is_finished(self) -> bool:
        return len(self.done) in self.finished_at

    def size(self, unit: str) -> int:
        return 2

    def opening(self):
        dataset = {"name": "t", "uri": "mem://t", "sha256": "0" * 64, "item_count": len(ITEMS)}
        return [
            RunStarted(
                benchmark="extraction", spec={}, spec_sha256="x", dataset=dataset, systems=[]
            )
        ]

    async def process(self, unit: str, ctx: RunContext) -> None:
        if unit == self.crash_on:
            await asyncio.sleep(0.01)  # let the other units' events reach the sink first
            raise Boom(unit)
        self.processed.append(unit)
        await ctx.append(
            ExtractionFailed(
                item_id=unit,
                system="s",
                system_version="1",
                attempt=1,
                error_class="x",
                error_message="y",
            )
        )
        ctx.charge(self.cost_per_unit)

    def closing(self, duration_s: float) -> RunFinished | None:
        if self.remaining():
            return None
        return RunFinished(
            terminal_events=len(self.done), completed=0, failed=len(self.done), duration_s=0
        )


def events(log: EventLog) -> list[dict[str, Any]]:
    return [event for _raw, event in log.read()]


def test_runs_every_unit_once_then_reports_already_finished(tmp_path: Path):
    log = EventLog(tmp_path / "log")
    progress: list[tuple[int, int]] = []
    result = run_kernel(
        log,
        RunContext(RUN_ID, PRODUCER),
        CountingStages(log),
        max_in_flight=1,
        on_progress=lambda done, total: progress.append((done, total)),
    )
    assert result.finished and not result.already_finished and result.stop_reason is None
    assert progress[0] == (0, 12) and progress[-1] == (12, 12)  # progress weighs unit sizes
    counts = Counter(e["event_type"] for e in events(log))
    assert counts == {"run_started": 1, "extraction_failed": 6, "run_finished": 1}
    assert result.events_appended == 8

    segments = log.segments()
    again = run_kernel(log, RunContext(RUN_ID, PRODUCER), CountingStages(log))
    assert again.already_finished and again.events_appended == 0
    assert log.segments() == segments  # nothing opened, not even an empty segment


def test_cost_cap_stops_the_run_without_run_finished_and_a_rerun_resumes(tmp_path: Path):
    log = EventLog(tmp_path / "log")
    stages = CountingStages(log, cost_per_unit=1.0)
    result = run_kernel(
        log, RunContext(RUN_ID, PRODUCER, cost_cap_usd=2.5), stages, max_in_flight=1
    )
    assert stages.processed == ITEMS[:3]  # the third charge crosses the cap; nothing after it
    assert result.stop_reason is not None and result.stop_reason.startswith("cost cap reached")
    assert not result.finished and result.spent_usd == 3.0
    assert not [e for e in events(log) if e["event_type"] == "run_finished"]

    resumed_stages = CountingStages(log, cost_per_unit=1.0)
    resumed = run_kernel(log, RunContext(RUN_ID, PRODUCER, cost_cap_usd=100), resumed_stages)
    assert resumed_stages.processed == ITEMS[3:] and resumed.finished
    terminal = Counter(
        e["payload"]["item_id"] for e in events(log) if e["event_type"] == "extraction_failed"
    )
    assert terminal == {item: 1 for item in ITEMS}


def test_a_crash_keeps_what_was_appended_and_the_rerun_completes(tmp_path: Path):
    log = EventLog(tmp_path / "log")
    with pytest.raises(Boom):
        run_kernel(log, RunContext(RUN_ID, PRODUCER), CountingStages(log, crash_on="item-3"))
    partial = events(log)
    assert not [e for e in partial if e["event_type"] == "run_finished"]
    assert {
        e["payload"]["item_id"] for e in partial if e["event_type"] == "extraction_failed"
    } <= set(ITEMS) - {"item-3"}
    assert verify_log(log).intact  # the writer closed cleanly after draining the sink

    result = run_kernel(log, RunContext(RUN_ID, PRODUCER), CountingStages(log))
    assert result.finished
    terminal = Counter(
        e["payload"]["item_id"] for e in events(log) if e["event_type"] == "extraction_failed"
    )
    assert terminal == {item: 1 for item in ITEMS}


def test_truncate_message_keeps_short_messages_and_says_how_long_long_ones_were():
    assert truncate_message("short") == "short"
    cut = truncate_message("x" * 2_500)
    assert cut.startswith("x" * 2_000) and cut.endswith("… [truncated, 2500 chars]")
