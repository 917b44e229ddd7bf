"""What the app must show, computed from the stored EVENTS and the inputs, never from the marts.

The events are read from the snapshot's `dim_events` (the log verbatim: payload JSON), so the
expectations do not depend on any dbt model; the extraction scores come from the independent
oracle of tests/dbt (`extraction_expected`), the QA figures from plain counting below
(methodology 2.3: accuracy over landed answers; 3: a series counts failures as incorrect).
"""

from __future__ import annotations

import csv
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "dbt"))  # the extraction oracle lives beside its tests
import extraction_expected  # noqa: E402

PRICE_SEED = REPO / "dbt_project" / "seeds" / "lane_prices.csv"


def payloads(db: Path, event_type: str, run_id: str) -> list[dict[str, Any]]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "select payload from marts.dim_events where event_type = ? and run_id = ? "
            "order by occurred_at, segment, line_no",
            [event_type, run_id],
        ).fetchall()
    return [json.loads(payload) for (payload,) in rows]


# --- extraction ----------------------------------------------------------------------------------


def extraction_leaderboard(db: Path, run_id: str) -> dict[str, dict[str, Any]]:
    """system -> the oracle's leaderboard row (default scoring vars) over the run's events."""
    items = {p["item_id"]: p for p in payloads(db, "item_registered", run_id)}
    pages = []
    for kind in ("extraction_completed", "extraction_failed"):
        for event in payloads(db, kind, run_id):
            item = items[event["item_id"]]
            completed = kind == "extraction_completed"
            pages.append(
                extraction_expected.Page(
                    run=run_id,
                    run_source="engine",
                    dataset_sha256=item["dataset_sha256"],
                    system=event["system"],
                    item_id=event["item_id"],
                    position=item["position"],
                    truth=item["ground_truth_text"],
                    anchors=list(item["anchors"]),
                    outcome="completed" if completed else "failed",
                    output=(event["output_text"] or "") if completed else None,
                    attempt=event["attempt"],
                    latency_ms=event["latency_ms"],
                )
            )
    rows = extraction_expected.expected_leaderboard(pages, bootstrap=False)
    return {system: row for (_run, system), row in rows.items()}


# --- question answering -------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    lane: str
    item_id: str
    outcome: str  # answered | failed | ...
    answer: str | None
    label: str | None  # None when not graded (the search never landed)

    @property
    def landed(self) -> bool:
        return self.outcome != "failed"


def qa_answers(db: Path, run_id: str) -> dict[tuple[str, str], Answer]:
    """(lane, item_id) -> the unit's latest answer and grade."""
    labels = {(p["lane"], p["item_id"]): p["label"] for p in payloads(db, "answer_graded", run_id)}
    return {
        (p["lane"], p["item_id"]): Answer(
            p["lane"],
            p["item_id"],
            p["outcome"],
            p.get("answer"),
            labels.get((p["lane"], p["item_id"])),
        )
        for p in payloads(db, "answer_synthesized", run_id)
    }


def questions(db: Path, run_id: str) -> dict[str, dict[str, Any]]:
    return {p["item_id"]: p for p in payloads(db, "question_registered", run_id)}


def strict_accuracy(answers: list[Answer]) -> float | None:
    landed = [a for a in answers if a.landed]
    return sum(a.label == "correct" for a in landed) / len(landed) if landed else None


def series_accuracy(answers: list[Answer]) -> float:
    """Methodology 3 as the series states it: failures count as incorrect."""
    return sum(a.label == "correct" for a in answers) / len(answers)


def by_lane(answers: dict[tuple[str, str], Answer]) -> dict[str, list[Answer]]:
    lanes: dict[str, list[Answer]] = defaultdict(list)
    for (lane, _item), answer in sorted(answers.items()):
        lanes[lane].append(answer)
    return dict(lanes)


def lane_prices() -> dict[str, dict[str, str]]:
    """The list prices the build joins (dbt_project/seeds/lane_prices.csv), by lane."""
    with PRICE_SEED.open(newline="") as handle:
        return {row["lane"]: row for row in csv.DictReader(handle)}
