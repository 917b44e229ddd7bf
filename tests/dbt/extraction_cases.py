"""Event sets for the dbt tests and the dev warehouse.

* `edge_case_runs()`: hand-made texts that exercise every scoring edge (short texts, empty
  texts, repeated shingles, NFKC-only differences, retries, failures, missing pairs,
  undeclared systems, non-content pages, an import run and a non-extraction run).
* `real_data_run()`: the 181 article-extraction-benchmark pages with three synthetic
  "systems": the ground truth itself, a degraded copy and a padded copy.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from pathlib import Path

from raw_events_fixture import Clock, RunBuilder

ARTICLE_BENCHMARK = Path("/work/shared/data/article-extraction-benchmark")
GROUND_TRUTH = ARTICLE_BENCHMARK / "ground-truth.json"

EDGE_DATASET_SHA256 = hashlib.sha256(b"bench edge cases v1").hexdigest()

LONG_PARAGRAPH = (
    "Researchers measured the river at dawn. The water was colder than any year on record. "
    "Local fishermen said the salmon arrived two weeks late, and the ferry kept its winter "
    "timetable until May."
)

# item_id -> (ground truth, anchors as the collector stores them: already normalised)
EDGE_ITEMS: dict[str, tuple[str, list[str]]] = {
    "e01": (
        "The quick brown fox jumps over the lazy dog. The quick brown fox jumps again!",
        ["The quick brown fox jumps over the lazy dog.", "jumps again!"],
    ),
    "e02": ("Hello world", ["Hello world"]),
    "e03": (
        "Größe:  café naïve 東京 ２０２４ ﬁnal ﬁgures — résumé",
        ["café naïve 東京 2024", "final figures"],
    ),
    "e04": (
        LONG_PARAGRAPH,
        ["Researchers measured the river at dawn.", "the salmon arrived two weeks late"],
    ),
    "e05": ("One two three four five six seven eight", ["three four five"]),
    "e06": ("a b c d a b c d a b c d", ["a b c d"]),
    "e07": ("Short text", []),
    "e08": ("", []),
}

NOT_FOUND_ARTICLE = (
    "Why every site has a page not found screen. " + "The history of the web is long. " * 80
)

# (system, item) -> list of attempts: ("completed", output, latency_ms) | ("failed", None, latency_ms)
EDGE_OUTPUTS: dict[tuple[str, str], list[tuple[str, str | None, float | None]]] = {
    ("alpha", "e01"): [("completed", EDGE_ITEMS["e01"][0], 120.0)],
    ("alpha", "e02"): [("failed", None, 5000.0), ("completed", "Hello, world!", 80.0)],
    ("alpha", "e03"): [("completed", "Größe: café naïve 東京 2024 final figures — résumé", 150.0)],
    ("alpha", "e04"): [("completed", "Access Denied", 40.0)],
    ("alpha", "e05"): [
        ("completed", "Menu Home News One two three four five six seven eight Share this", 200.0)
    ],
    ("alpha", "e06"): [("completed", "a b c d", 90.0)],
    ("alpha", "e07"): [("completed", "Short", 60.0)],
    ("alpha", "e08"): [("completed", "", 50.0)],
    ("beta", "e01"): [("completed", EDGE_ITEMS["e01"][0], 300.0), ("failed", None, 9000.0)],
    ("beta", "e02"): [("completed", "", 310.0)],
    ("beta", "e03"): [("completed", "   \n\t  ", 320.0)],
    ("beta", "e05"): [("completed", "five six seven eight", 330.0)],
    ("beta", "e06"): [("completed", "A B C D", 340.0)],
    ("beta", "e07"): [("completed", "Short text", 350.0)],
    ("beta", "e08"): [("completed", "Some words here now", 360.0)],
    ("delta", "e01"): [("completed", NOT_FOUND_ARTICLE + EDGE_ITEMS["e01"][0], 1000.0)],
}

EDGE_DECLARED_SYSTEMS = [("alpha", "1.0"), ("beta", "2.0"), ("gamma", "3.0")]  # delta is undeclared


def edge_case_runs(clock: Clock | None = None) -> list:
    clock = clock or Clock()
    edge = RunBuilder(
        "edge", EDGE_DATASET_SHA256, EDGE_DECLARED_SYSTEMS, item_count=len(EDGE_ITEMS), clock=clock
    )
    for position, (item_id, (truth, anchors)) in enumerate(EDGE_ITEMS.items()):
        edge.item(item_id, position, truth, anchors)
    completed = failed = 0
    for (system, item_id), attempts in EDGE_OUTPUTS.items():
        for attempt, (outcome, output, latency_ms) in enumerate(attempts, start=1):
            if outcome == "completed":
                edge.completed(
                    item_id,
                    system,
                    output,
                    attempt=attempt,
                    latency_ms=latency_ms,
                    version="9.9" if system == "delta" else None,
                )
                completed += 1
            else:
                edge.failed(item_id, system, attempt=attempt, latency_ms=latency_ms)
                failed += 1
    edge.finished(completed, failed)

    # An imported system on the same dataset: outputs equal the truth, no latency known.
    imported = RunBuilder(
        "imported",
        EDGE_DATASET_SHA256,
        [("ext-import", "2020.1")],
        source="import",
        item_count=len(EDGE_ITEMS),
        clock=clock,
    )
    for position, (item_id, (truth, anchors)) in enumerate(EDGE_ITEMS.items()):
        imported.item(item_id, position, truth, anchors)
        imported.completed(item_id, "ext-import", truth, latency_ms=None)

    # A run of another benchmark: in dim_runs, never in the extraction marts.
    other = RunBuilder(
        "simpleqa-smoke", "0" * 64, [("search-x", "1")], benchmark="simpleqa", clock=clock
    )
    return edge.events + imported.events + other.events


def edge_expected_outputs() -> dict[tuple[str, str], str | None]:
    """(system, item) -> the resolved output text (None when failed or missing)."""
    systems = ["alpha", "beta", "gamma", "delta"]
    resolved: dict[tuple[str, str], str | None] = {}
    for system in systems:
        for item_id in EDGE_ITEMS:
            attempts = EDGE_OUTPUTS.get((system, item_id), [])
            resolved[(system, item_id)] = (
                attempts[-1][1] if attempts and attempts[-1][0] == "completed" else None
            )
    return resolved


# --- the real corpus ---------------------------------------------------------------------------


def load_ground_truth() -> dict[str, dict]:
    return json.loads(GROUND_TRUTH.read_text(encoding="utf-8"))


def _normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def real_anchors(truth: str) -> list[str]:
    words = _normalize(truth).split(" ")
    mid = len(words) // 2
    return [" ".join(words[:8]), " ".join(words[mid : mid + 8]), " ".join(words[-8:])]


def degrade(truth: str) -> str:
    """Keep the first 12 words, then drop every 7th word and the last 15 % (a lossy extractor)."""
    words = [w for i, w in enumerate(truth.split()) if i < 12 or i % 7 != 3]
    return " ".join(words[: int(len(words) * 0.85)])


def pad(truth: str) -> str:
    """Boilerplate around the full article (output longer than the passage)."""
    return (
        "Skip to content. Subscribe to our newsletter! Menu Home World Business\n"
        + truth
        + "\n\nRelated stories: cookie policy, privacy, terms of use."
    )


REAL_SYSTEMS = {"truth": lambda t: t, "degraded": degrade, "padded": pad}


def real_data_run(clock: Clock | None = None):
    truth_by_id = load_ground_truth()
    dataset_sha256 = hashlib.sha256(GROUND_TRUTH.read_bytes()).hexdigest()
    run = RunBuilder(
        "article-extraction-benchmark",
        dataset_sha256,
        [(s, "synthetic") for s in REAL_SYSTEMS],
        item_count=len(truth_by_id),
        clock=clock or Clock(),
    )
    for position, (item_id, record) in enumerate(sorted(truth_by_id.items())):
        run.item(
            item_id,
            position,
            record["articleBody"],
            real_anchors(record["articleBody"]),
            url=record["url"],
        )
    for system, make_output in REAL_SYSTEMS.items():
        for position, (item_id, record) in enumerate(sorted(truth_by_id.items())):
            run.completed(
                item_id, system, make_output(record["articleBody"]), latency_ms=100.0 + 7 * position
            )
    run.finished(len(REAL_SYSTEMS) * len(truth_by_id), 0)
    return run
