"""What a rubric-judged run has already done, read back from the log (the log is the cache).

Remaining work = spec − facts present, per stage: research attempts per (item, lane), the
normalised report of the attempt that will be judged, and the latest verdict per
(judge regime, criterion, sample). Tasks and criteria are read from their registration events,
so judging again (`rejudge`) needs nothing but the log.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from collectors.draco.model import Criterion, RubricTask
from collectors.runs.kernel import fold_log
from warehouse.log import EventLog

VerdictKey = tuple[str, str, int, str, str, int]  # item, lane, attempt, judge, criterion, sample


@dataclass
class ResearchUnit:
    """One (item, lane): its attempts and what each produced."""

    completed: dict[int, dict[str, Any]] = field(default_factory=dict)  # attempt -> event
    failed: dict[int, dict[str, Any]] = field(default_factory=dict)
    # (attempt, normalizer_version) -> report_normalized event
    normalized: dict[tuple[int, str], dict[str, Any]] = field(default_factory=dict)
    # Attempts that reached a vendor (a `research:*` provider call was logged), terminal or not:
    # an attempt cut off by a crash or an abort is abandoned, never re-used, because its logged
    # exchanges own that attempt number (a re-used number would collide with them).
    started: set[int] = field(default_factory=set)

    @property
    def latest_attempt(self) -> int | None:
        """The latest attempt with a terminal research event."""
        attempts = set(self.completed) | set(self.failed)
        return max(attempts) if attempts else None

    @property
    def latest_started(self) -> int | None:
        attempts = self.started | set(self.completed) | set(self.failed)
        return max(attempts) if attempts else None

    @property
    def scored_attempt(self) -> int | None:
        """The latest successful attempt: the one that is normalised, judged and scored."""
        return max(self.completed) if self.completed else None

    @property
    def failed_attempts(self) -> int:
        return len(self.failed)


@dataclass
class DracoRunState:
    run_id: str
    run_started: dict[str, Any] | None = None
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # item -> task payload
    criteria: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    units: dict[tuple[str, str], ResearchUnit] = field(
        default_factory=lambda: defaultdict(ResearchUnit)
    )
    # key -> (judge_attempt, outcome) of the latest verdict event
    verdicts: dict[VerdictKey, tuple[int, str]] = field(default_factory=dict)
    judge_regimes: dict[str, dict[str, Any]] = field(default_factory=dict)
    finished_terminal_counts: set[int] = field(default_factory=set)

    def record(self, event: dict[str, Any]) -> None:
        kind, payload = event["event_type"], event["payload"]
        if kind == "run_started":
            self.run_started = event
        elif kind == "rubric_task_registered":
            self.tasks[payload["item_id"]] = payload
        elif kind == "rubric_criterion_registered":
            known = {c["criterion_id"] for c in self.criteria[payload["item_id"]]}
            if payload["criterion_id"] not in known:
                self.criteria[payload["item_id"]].append(payload)
        elif kind in ("provider_call_completed", "provider_call_failed"):
            if payload["stage"].startswith("research:"):
                self.units[(payload["item_id"], payload["lane"])].started.add(payload["attempt"])
        elif kind == "research_completed":
            self.units[(payload["item_id"], payload["lane"])].completed[payload["attempt"]] = event
        elif kind == "research_failed":
            self.units[(payload["item_id"], payload["lane"])].failed[payload["attempt"]] = event
        elif kind == "report_normalized":
            unit = self.units[(payload["item_id"], payload["lane"])]
            unit.normalized[(payload["attempt"], payload["normalizer_version"])] = event
        elif kind == "judge_regime_registered":
            self.judge_regimes[payload["judge_id"]] = payload
        elif kind == "judge_verdict":
            key = (
                payload["item_id"],
                payload["lane"],
                payload["attempt"],
                payload["judge_id"],
                payload["criterion_id"],
                payload["sample"],
            )
            previous = self.verdicts.get(key)
            if previous is None or payload["judge_attempt"] > previous[0]:
                self.verdicts[key] = (payload["judge_attempt"], payload["outcome"])
        elif kind == "run_finished":
            self.finished_terminal_counts.add(payload["terminal_events"])

    def unit(self, item_id: str, lane: str) -> ResearchUnit:
        return self.units[(item_id, lane)]

    def rubric_task(self, item_id: str) -> RubricTask:
        """The task exactly as registered in this run (what rejudging reads)."""
        task = self.tasks[item_id]
        criteria = sorted(self.criteria[item_id], key=lambda c: c["position"])
        return RubricTask(
            item_id=item_id,
            position=task["position"],
            domain=task["domain"],
            problem=task["problem"],
            rubric_id=task["rubric_id"],
            criteria=tuple(
                Criterion(
                    criterion_id=c["criterion_id"],
                    axis=c["axis"],
                    axis_title=c["axis_title"],
                    position=c["position"],
                    weight=c["weight"],
                    requirement=c["requirement"],
                )
                for c in criteria
            ),
        )

    def lanes(self) -> list[str]:
        """The lanes of the run's spec, in spec order."""
        if self.run_started is None:
            return sorted({lane for _item, lane in self.units})
        return [system["name"] for system in self.run_started["payload"]["systems"]]

    def item_ids(self) -> list[str]:
        if self.run_started is not None:
            return list(self.run_started["payload"]["spec"]["item_ids"])
        return sorted(self.tasks, key=lambda item: self.tasks[item]["position"])

    def terminal_events(self) -> int:
        research = sum(len(u.completed) + len(u.failed) for u in self.units.values())
        return research + len(self.verdicts)


def read_draco_run_state(log: EventLog, run_id: str) -> DracoRunState:
    state = DracoRunState(run_id)
    fold_log(log, run_id, state.record)
    return state


def draco_runs(log: EventLog) -> dict[str, dict[str, Any]]:
    """run_id -> run_started payload, for every rubric-judged run in the log."""
    runs: dict[str, dict[str, Any]] = {}
    for _raw, event in log.read():
        if event["event_type"] == "run_started" and event["payload"]["benchmark"] in (
            "draco",
            "rubric",
        ):
            runs.setdefault(event["run_id"], event["payload"])
    return runs
