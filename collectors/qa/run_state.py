"""What the log already holds for one QA run, stage by stage.

The log is the only resume state. A (question, lane) unit goes through up to five stages,
each done when its terminal event exists for the unit's current attempt:

    search     provider_call_completed | provider_call_failed (stage "search")
    chunks     chunks_normalized | provider_call_failed (stage "normalize": unusable body)
    synthesize answer_synthesized (always exactly one; outcome says what happened)
    grade      answer_graded (outcome "failed" for a failed grader call); none for an answer
               outcome "failed"
    relevance  per chunk rank: relevance_graded (outcome "failed" for a failed judge call)

Logs written before answer_graded v2 hold a failed grader / judge call as provider_call_failed
(stage "grade" / "relevance:<rank>"); it is terminal too.

An auth rejection (401/402/403) of a search is logged but is not terminal: the lane is
aborted, and the next invocation retries the unit as a new attempt once the key is fixed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collectors.llm.base import AUTH_STATUSES
from collectors.runs.kernel import fold_log
from warehouse.log import EventLog

SEARCH, NORMALIZE, SYNTHESIZE, GRADE, RELEVANCE = (
    "search",
    "normalize",
    "synthesize",
    "grade",
    "relevance",
)
REJECTED_STATUSES = frozenset({400, 422})


def relevance_stage(rank: int) -> str:
    return f"{RELEVANCE}:{rank}"


def refuses_the_key(status_code: int | None, error_class: str | None) -> bool:
    """A search answer that aborts its lane: the vendor refused the key, its credits or plan."""
    return status_code in AUTH_STATUSES or error_class == "auth"


def classify_search(event: dict[str, Any]) -> str:
    """usable | rejected (landed non-answer) | failed (never landed) | auth (abort the lane)."""
    payload = event["payload"]
    status = payload.get("status_code")
    if refuses_the_key(status, payload.get("error_class")):
        return "auth"
    if event["event_type"] == "provider_call_completed" and 200 <= status < 300:
        return "usable"
    if status in REJECTED_STATUSES or payload.get("error_class") == "rejected":
        return "rejected"
    return "failed"


@dataclass
class UnitAttempt:
    """Terminal events (envelope dicts) of one attempt of one (question, lane) unit."""

    search: dict[str, Any] | None = None
    chunks: dict[str, Any] | None = None  # chunks_normalized or the normalize failure
    answer: dict[str, Any] | None = None
    grade: dict[str, Any] | None = None
    relevance: dict[int, dict[str, Any]] = field(default_factory=dict)
    synth_failure: dict[str, Any] | None = None

    @property
    def search_class(self) -> str | None:
        return classify_search(self.search) if self.search is not None else None

    @property
    def chunk_list(self) -> list[dict[str, Any]] | None:
        if self.chunks is None or self.chunks["event_type"] != "chunks_normalized":
            return None
        return self.chunks["payload"]["chunks"]

    @property
    def outcome(self) -> str | None:
        return self.answer["payload"]["outcome"] if self.answer is not None else None

    def terminal_count(self) -> int:
        search = 1 if self.search is not None and self.search_class != "auth" else 0
        return (
            search
            + sum(e is not None for e in (self.chunks, self.answer, self.grade))
            + len(self.relevance)
        )


@dataclass
class QaRunState:
    run_id: str
    grader_id: str
    judge_id: str | None
    units: dict[tuple[str, str], dict[int, UnitAttempt]] = field(default_factory=dict)
    registered: set[str] = field(default_factory=set)
    finished_at_counts: set[int] = field(default_factory=set)

    def attempts(self, item_id: str, lane: str) -> dict[int, UnitAttempt]:
        return self.units.setdefault((item_id, lane), {})

    def unit(self, item_id: str, lane: str, attempt: int) -> UnitAttempt:
        return self.attempts(item_id, lane).setdefault(attempt, UnitAttempt())

    def latest_attempt(self, item_id: str, lane: str) -> int | None:
        attempts = self.units.get((item_id, lane))
        return max(attempts) if attempts else None

    @property
    def terminal_events(self) -> int:
        return sum(
            u.terminal_count() for attempts in self.units.values() for u in attempts.values()
        )

    @property
    def is_finished(self) -> bool:
        return self.terminal_events in self.finished_at_counts

    def record(self, event: dict[str, Any]) -> None:
        kind, payload = event["event_type"], event["payload"]
        if kind == "question_registered":
            self.registered.add(payload["item_id"])
            return
        if kind == "run_finished":
            self.finished_at_counts.add(payload["terminal_events"])
            return
        if "lane" not in payload:
            return
        unit = self.unit(payload["item_id"], payload["lane"], payload["attempt"])
        if kind in ("provider_call_completed", "provider_call_failed"):
            stage = payload["stage"]
            if stage == SEARCH:
                # A later non-auth outcome wins over an auth rejection of the same attempt.
                if unit.search is None or unit.search_class == "auth":
                    unit.search = event
            elif stage == NORMALIZE:
                unit.chunks = event
            elif stage == SYNTHESIZE:
                unit.synth_failure = event
            elif stage == GRADE:
                unit.grade = event
            elif stage.startswith(f"{RELEVANCE}:"):
                unit.relevance[int(stage.split(":", 1)[1])] = event
        elif kind == "chunks_normalized":
            unit.chunks = event
        elif kind == "answer_synthesized":
            unit.answer = event
        elif kind == "answer_graded" and payload["grader_id"] == self.grader_id:
            unit.grade = event
        elif kind == "relevance_graded" and payload["judge_id"] == self.judge_id:
            unit.relevance[payload["rank"]] = event


def read_qa_run_state(
    log: EventLog, run_id: str, *, grader_id: str, judge_id: str | None
) -> QaRunState:
    state = QaRunState(run_id, grader_id, judge_id)
    fold_log(log, run_id, state.record)
    return state


@dataclass(frozen=True)
class SeriesRun:
    run_id: str
    run_index: int
    config_sha256: str
    finished: bool


def read_series(log: EventLog, series: str) -> list[SeriesRun]:
    """Every run of a repeat-run series, in run_index order."""
    started: dict[str, tuple[int, str]] = {}
    finished: set[str] = set()
    for _raw, event in log.read():
        if event["event_type"] == "run_started" and event["payload"].get("series") == series:
            payload = event["payload"]
            config = payload["spec"].get("config_sha256", payload["spec_sha256"])
            started[event["run_id"]] = (payload.get("run_index") or 1, config)
        elif event["event_type"] == "run_finished":
            finished.add(event["run_id"])
    runs = [
        SeriesRun(run_id, index, config, run_id in finished)
        for run_id, (index, config) in started.items()
    ]
    return sorted(runs, key=lambda run: run.run_index)
