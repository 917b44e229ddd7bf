"""What the log already says about one run, and the pieces every extraction run shares.

The log is the only resume state: a (item, system) unit is done when a terminal event for it
exists (HELM's "done when its terminal artifact exists"). Nothing is kept on the side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collectors.extraction.anchors import ANCHOR_RULE_VERSION, build_anchors
from collectors.extraction.corpus import CorpusItem
from collectors.runs.kernel import fold_log
from collectors.runs.messages import truncate_message
from collectors.runs.summary import RunSummary
from warehouse.events import TERMINAL_EXTRACTION_EVENTS, ItemRegistered
from warehouse.log import EventLog

__all__ = ["RunState", "RunSummary", "item_registered", "read_run_state", "truncate_message"]


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

    def record(self, event: dict[str, Any]) -> None:
        """Fold one envelope dict (from the log, or just appended by the kernel)."""
        payload = event["payload"]
        if event["event_type"] in TERMINAL_EXTRACTION_EVENTS:
            self.record_terminal(
                payload["item_id"],
                payload["system"],
                payload["attempt"],
                failed=event["event_type"] == "extraction_failed",
            )
        elif event["event_type"] == "run_finished":
            self.finished_at_counts.add(payload["terminal_events"])

    def record_terminal(self, item_id: str, system: str, attempt: int, failed: bool) -> None:
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
    fold_log(log, run_id, state.record)
    return state


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
