"""Runs whose facts are all known up front (an imported file): no units to resume, no kernel;
the whole run, closed by its RunFinished, is one append."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from warehouse.events import Envelope, Payload, RunFinished, make_event
from warehouse.log import EventLog
from warehouse.provenance import producer_for


def has_finished(log: EventLog, run_id: str) -> bool:
    """Does the log already hold the run's RunFinished (the file was imported before)?"""
    return any(
        event["run_id"] == run_id and event["event_type"] == "run_finished"
        for _raw, event in log.read()
    )


def closed_run_events(
    payloads: Iterable[Payload],
    *,
    run_id: str,
    spec: dict[str, Any],
    completed: int,
    failed: int,
    started: float,
) -> list[Envelope]:
    """The run's payloads, then its RunFinished (every unit is terminal: completed or failed;
    `started` is the `time.monotonic()` the run began at), as events of the spec's producer."""
    finished = RunFinished(
        terminal_events=completed + failed,
        completed=completed,
        failed=failed,
        duration_s=round(time.monotonic() - started, 3),
    )
    producer = producer_for(spec)
    return [make_event(p, run_id=run_id, producer=producer) for p in (*payloads, finished)]
