"""What the marts must contain, derived from the test inputs and the oracle only."""

from __future__ import annotations

import hashlib
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

import extraction_oracle as oracle
from extraction_cases import (
    EDGE_DATASET_SHA256,
    EDGE_ITEMS,
    EDGE_OUTPUTS,
    GROUND_TRUTH,
    REAL_SYSTEMS,
    load_ground_truth,
    real_anchors,
)

DEFAULT_VARS = {
    "extraction_weights": dict(oracle.DEFAULT_WEIGHTS),
    "useful_success_threshold": 0.3,
    "bootstrap_seed": 20261130,
    "bootstrap_samples": 1000,
    "latency_scale_s": 10,
    "throughput_full_bytes": 100000,
    "non_content_rules_version": "1",
}

# Pages the non-content rules v1 must flag (everything else must not be flagged).
EDGE_NON_CONTENT = {("edge", "alpha", "e04")}


@dataclass
class Page:
    run: str
    run_source: str
    dataset_sha256: str
    system: str
    item_id: str
    position: int
    truth: str
    anchors: list[str]
    outcome: str
    output: str | None
    attempt: int | None
    latency_ms: float | None
    non_content: bool = False
    scores: dict = field(default_factory=dict)

    @property
    def output_bytes(self) -> int | None:
        return len(self.output.encode()) if self.outcome == "completed" else None


def expected_pages() -> list[Page]:
    pages = []
    for system in ("alpha", "beta", "gamma", "delta"):
        for position, (item_id, (truth, anchors)) in enumerate(EDGE_ITEMS.items()):
            attempts = EDGE_OUTPUTS.get((system, item_id), [])
            if attempts:
                outcome, output, latency_ms = attempts[-1]
                attempt = len(attempts)
            else:
                outcome, output, latency_ms, attempt = "missing", None, None, None
            pages.append(
                Page(
                    "edge",
                    "engine",
                    EDGE_DATASET_SHA256,
                    system,
                    item_id,
                    position,
                    truth,
                    anchors,
                    outcome,
                    output,
                    attempt,
                    latency_ms,
                    non_content=("edge", system, item_id) in EDGE_NON_CONTENT,
                )
            )
    for position, (item_id, (truth, anchors)) in enumerate(EDGE_ITEMS.items()):
        pages.append(
            Page(
                "imported",
                "import",
                EDGE_DATASET_SHA256,
                "ext-import",
                item_id,
                position,
                truth,
                anchors,
                "completed",
                truth,
                1,
                None,
            )
        )
    real_sha = hashlib.sha256(GROUND_TRUTH.read_bytes()).hexdigest()
    truth_by_id = load_ground_truth()
    for system, make_output in REAL_SYSTEMS.items():
        for position, (item_id, record) in enumerate(sorted(truth_by_id.items())):
            truth = record["articleBody"]
            pages.append(
                Page(
                    "article-extraction-benchmark",
                    "engine",
                    real_sha,
                    system,
                    item_id,
                    position,
                    truth,
                    real_anchors(truth),
                    "completed",
                    make_output(truth),
                    1,
                    100.0 + 7 * position,
                )
            )
    for page in pages:
        page.scores = page_scores(page, DEFAULT_VARS["useful_success_threshold"])
    return pages


def page_scores(page: Page, threshold: float) -> dict:
    shingles = oracle.page_shingles(page.truth, page.output)
    tp, fp, fn = shingles.normalized
    completeness = oracle.completeness(page.anchors, page.output)
    raw_success = page.outcome == "completed" and oracle.normalize(page.output) != ""
    non_content = raw_success and page.non_content
    precision = oracle.precision_score(tp, fp, fn)
    recall = oracle.recall_score(tp, fp, fn)
    return {
        "truth_tokens": len(oracle.tokenize(page.truth)),
        "output_tokens": len(oracle.tokenize(page.output)),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "page_precision": precision,
        "page_recall": recall,
        # a page without a completed extraction counts 0, whatever "" scores against its truth
        "page_f1": 2 * precision * recall / (precision + recall)
        if page.outcome == "completed" and precision + recall > 0
        else 0.0,
        "exact_match": oracle.exact_match(page.truth, page.output),
        "anchors_total": len(page.anchors),
        "anchors_found": sum(a in oracle.normalize(page.output) for a in page.anchors),
        "completeness": completeness,
        "token_recall": oracle.token_recall(page.truth, page.output),
        "window_precision": oracle.window_precision(page.truth, page.output),
        "token_f1": oracle.token_f1(page.truth, page.output),
        "raw_success": raw_success,
        "non_content": non_content,
        "useful_success": raw_success
        and not non_content
        and completeness is not None
        and completeness >= threshold,
    }


def _mean(values):
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else None


def expected_leaderboard(
    pages: list[Page], vars_: dict = DEFAULT_VARS, bootstrap: bool = True
) -> dict:
    groups: dict[tuple[str, str], list[Page]] = defaultdict(list)
    for page in pages:
        page.scores = page_scores(page, vars_["useful_success_threshold"])
        groups[(page.run, page.system)].append(page)
    weights = vars_["extraction_weights"]
    rows = {}
    for key, group in groups.items():
        group.sort(key=lambda p: (p.position, p.item_id))
        corpus = oracle.corpus_metrics([(p.truth, p.output) for p in group])
        latencies = [
            p.latency_ms
            for p in group
            if p.outcome == "completed" and p.latency_ms is not None and p.run_source == "engine"
        ]
        p95_ms = oracle.percentile_cont(latencies, 0.95)
        p95_s = None if p95_ms is None else p95_ms / 1000
        avg_bytes = statistics.mean(p.output_bytes or 0 for p in group)
        row = {
            "run_source": group[0].run_source,
            "dataset_sha256": group[0].dataset_sha256,
            "n_items": len(group),
            "n_completed": sum(p.outcome == "completed" for p in group),
            "n_failed": sum(p.outcome == "failed" for p in group),
            "shingle_precision": corpus.precision,
            "shingle_recall": corpus.recall,
            "shingle_f1": corpus.f1,
            "shingle_accuracy": corpus.accuracy,
            "completeness": _mean(
                p.scores["completeness"] for p in group if p.scores["raw_success"]
            ),
            "raw_success_rate": statistics.mean(p.scores["raw_success"] for p in group),
            "useful_success_rate": statistics.mean(p.scores["useful_success"] for p in group),
            "token_f1": _mean(p.scores["token_f1"] for p in group),
            "latency_p95_s": p95_s,
            "avg_output_bytes": avg_bytes,
            "latency_score": oracle.latency_score(p95_s, vars_["latency_scale_s"]),
            "throughput_score": oracle.throughput_score(avg_bytes, vars_["throughput_full_bytes"]),
        }
        terms = {
            "completeness": row["completeness"],
            "success": row["useful_success_rate"],
            "f1": row["token_f1"],
            "latency": row["latency_score"],
            "throughput": row["throughput_score"],
            "shingle_precision": row["shingle_precision"],
            "shingle_recall": row["shingle_recall"],
            "shingle_f1": row["shingle_f1"],
        }
        row["composite"] = oracle.composite(terms, weights)
        row["seed_composite"] = oracle.composite(terms, oracle.SEED_WEIGHTS)
        rows[key] = row
    for row in rows.values():
        peers = [r for r in rows.values() if r["dataset_sha256"] == row["dataset_sha256"]]
        row["rank_composite"] = 1 + sum(r["composite"] > row["composite"] + 1e-12 for r in peers)
        row["rank_shingle_f1"] = 1 + sum(r["shingle_f1"] > row["shingle_f1"] + 1e-12 for r in peers)
        row["rank_seed_composite"] = 1 + sum(
            r["seed_composite"] > row["seed_composite"] + 1e-12 for r in peers
        )
    return rows


def expected_bootstrap(
    group: list[Page], run_id: str, system: str, seed: int, samples: int
) -> dict:
    group = sorted(group, key=lambda p: (p.position, p.item_id))
    pages = [
        (*oracle.page_shingles(p.truth, p.output).normalized, oracle.exact_match(p.truth, p.output))
        for p in group
    ]
    return oracle.bootstrap_std(pages, seed=seed, samples=samples, run_id=run_id, system=system)


def close(got, expected, tol=1e-9) -> bool:
    if expected is None or got is None:
        return got is None and expected is None
    if isinstance(expected, bool):
        return got == expected
    return abs(float(got) - float(expected)) <= tol
