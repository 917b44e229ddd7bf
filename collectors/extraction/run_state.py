"""What the log already says about one run, and the pieces every extraction run shares.

The log is the only resume state: a (item, system) unit is done when a terminal event for it
exists (HELM's "done when its terminal artifact exists"). Nothing is kept on the side.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from collectors.extraction.anchors import ANCHOR_RULE_VERSION, build_anchors
from collectors.extraction.corpus import CorpusItem
from warehouse.events import TERMINAL_EXTRACTION_EVENTS, ItemRegistered
from warehouse.log import EventLog

MAX_ERROR_MESSAGE_CHARS = 2_000


@dataclass(frozen=True)
class Outcome:
    attempt: int
    failed: bool


@dataclass
class RunState:
    run_id: str
    latest: dict[tuple[str, str], Outcome] = field(default_factory=dict)
    terminal_events: int = 0
    # `terminal_events` of every run_finished already logged for this run.
    finished_at_counts: set[int] = field(default_factory=set)

    def record(self, item_id: str, system: str, attempt: int, failed: bool) -> None:
        self.terminal_events += 1
        previous = self.latest.get((item_id, system))
        if previous is None or attempt >= previous.attempt:
            self.latest[(item_id, system)] = Outcome(attempt, failed)

    @property
    def is_finished(self) -> bool:
        return self.terminal_events in self.finished_at_counts

    def counts(self, units: list[tuple[str, str]]) -> tuple[int, int]:
        """(completed, failed) by the latest attempt of each unit."""
        outcomes = [self.latest[unit] for unit in units if unit in self.latest]
        failed = sum(1 for outcome in outcomes if outcome.failed)
        return len(outcomes) - failed, failed


def read_run_state(log: EventLog, run_id: str) -> RunState:
    state = RunState(run_id)
    for _raw, event in log.read():
        if event["run_id"] != run_id:
            continue
        payload = event["payload"]
        if event["event_type"] in TERMINAL_EXTRACTION_EVENTS:
            state.record(
                payload["item_id"],
                payload["system"],
                payload["attempt"],
                failed=event["event_type"] == "extraction_failed",
            )
        elif event["event_type"] == "run_finished":
            state.finished_at_counts.add(payload["terminal_events"])
    return state


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    spec_sha256: str
    planned: int  # (item, system) units in the spec
    skipped_existing: int  # units that already had a terminal event and were not redone
    completed: int  # units completed by this invocation
    failed: int  # units failed by this invocation
    already_finished: bool  # nothing to do: the run had finished before
    duration_s: float

    @property
    def status(self) -> str:
        if self.already_finished:
            return "already finished"
        return "finished" if self.failed == 0 else f"finished with {self.failed} failures"


def item_registered(item: CorpusItem, dataset_sha256: str) -> ItemRegistered:
    return ItemRegistered(
        item_id=item.item_id,
        dataset_sha256=dataset_sha256,
        position=item.position,
        url=item.url,
        ground_truth_text=item.truth_text,
        anchors=build_anchors(item.truth_text),
        anchor_rule_version=ANCHOR_RULE_VERSION,
        input_sha256=item.html_sha256,
        input_bytes=item.html_bytes,
    )


def truncate_message(message: str, limit: int = MAX_ERROR_MESSAGE_CHARS) -> str:
    if len(message) <= limit:
        return message
    return f"{message[:limit]}… [truncated, {len(message)} chars]"
