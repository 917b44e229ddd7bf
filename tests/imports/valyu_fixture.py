"""Files in exactly valyu-benchmarks' DRACO formats, generated from the real DRACO test split.

No third-party result file is copied: verdicts are deterministic pseudo-random draws, and every
figure the file publishes is computed here the way their code computes it, written plainly as
an oracle independent of our dbt models:

* per run (the `rubric` library, PerCriterionGrader.aggregate): raw = sum(weight * [MET]),
  P = sum(max(0, weight)), normalized_score = clamp(raw / P, 0, 1); pass_rate =
  share of criteria with (weight > 0 and MET) or (weight < 0 and UNMET) (rubric_eval.py
  compute_pass_rate);
* per item (rubric_eval.py evaluate_item): the mean of normalized_score / pass_rate over runs;
* header (rubric_eval.py main_async): overall = mean over every result (an errored result at
  0.0); domain_scores / domain_pass_rates = mean over that domain's results without an error;
  avg_latency_s = mean of the truthy `elapsed` values.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

from collectors.draco.model import RubricTask

JUDGE_MODEL = "gemini/gemini-3-pro-preview"
UNMATCHED_ID = "00000000-0000-4000-8000-000000000000"


def _run(task: RubricTask, rng: random.Random, skill: float) -> dict:
    criteria = []
    for c in task.criteria:
        # a skilled system meets positives and avoids penalties; sometimes commits them
        met = rng.random() < (skill if c.weight > 0 else 1 - skill)
        criteria.append(
            {
                "requirement": c.requirement,
                "weight": float(c.weight),
                "verdict": "MET" if met else "UNMET",
                "explanation": f"synthetic verdict for {c.criterion_id}",
            }
        )
    positive = sum(max(0.0, r["weight"]) for r in criteria)
    raw = sum((1.0 if r["verdict"] == "MET" else 0.0) * r["weight"] for r in criteria)
    score = max(0.0, min(1.0, raw / positive)) if positive > 0 else 0.0
    passed = sum(
        1
        for r in criteria
        if (r["weight"] > 0 and r["verdict"] == "MET")
        or (r["weight"] < 0 and r["verdict"] == "UNMET")
    )
    return {
        "normalized_score": score,
        "pass_rate": passed / len(criteria),
        "raw_score": raw,
        "criteria_results": criteria,
    }


def valyu_grading(
    tasks: list[RubricTask],
    *,
    runs: int = 2,
    seed: int = 7,
    errored: RubricTask | None = None,
    unmatched: bool = True,
) -> dict:
    rng = random.Random(seed)
    results = []
    for index, task in enumerate(tasks):
        skill = 0.55 if task.domain == "Medicine" else 0.3 + 0.6 * rng.random()
        all_runs = [_run(task, rng, skill) for _ in range(runs)]
        results.append(
            {
                "id": task.item_id,
                "domain": task.domain,
                "normalized_score": sum(r["normalized_score"] for r in all_runs) / runs,
                "pass_rate": sum(r["pass_rate"] for r in all_runs) / runs,
                "runs": all_runs,
                "elapsed": 100.0 + 13.5 * index,
                "provider": "valyu",
                "model": "heavy",
            }
        )
    if errored is not None:
        results.append(
            {
                "id": errored.item_id,
                "domain": errored.domain,
                "normalized_score": 0.0,
                "pass_rate": 0.0,
                "error": "no_criteria",
            }
        )
    if unmatched:
        results.append({**results[0], "id": UNMATCHED_ID})
    domain_scores: dict[str, list[float]] = defaultdict(list)
    domain_pass: dict[str, list[float]] = defaultdict(list)
    for r in results:
        if r.get("error"):
            continue
        domain_scores[r["domain"]].append(r["normalized_score"])
        domain_pass[r["domain"]].append(r["pass_rate"])
    latencies = [r["elapsed"] for r in results if r.get("elapsed")]
    return {
        "judge_model": JUDGE_MODEL,
        "n_items": len(results),
        "runs_per_item": runs,
        "avg_latency_s": sum(latencies) / len(latencies),
        "overall_score": sum(r["normalized_score"] for r in results) / len(results),
        "overall_pass_rate": sum(r["pass_rate"] for r in results) / len(results),
        "domain_scores": {d: sum(s) / len(s) for d, s in domain_scores.items()},
        "domain_pass_rates": {d: sum(s) / len(s) for d, s in domain_pass.items()},
        "results": results,
    }


def valyu_inference(tasks: list[RubricTask], *, failed: RubricTask | None = None) -> list[dict]:
    """draco/run.py run_item records: a report citing one source per task, one failed task."""
    records = []
    for index, task in enumerate(tasks):
        first_words = " ".join(task.criteria[0].requirement.split()[:30])
        records.append(
            {
                "id": task.item_id,
                "problem": task.problem,
                "domain": task.domain,
                "output": f"# Report\n\n{first_words}.\n\n## Sources\n- https://example.org/{index}\n",
                "elapsed": 50.0 + index,
                "provider": "valyu",
                "model": "heavy",
                "meta": {
                    "sources": [
                        {
                            "title": f"Source {index}",
                            "url": f"https://example.org/{index}",
                            "snippet": "s",
                        }
                    ],
                    "cost": 2.5,
                },
                "error": None,
            }
        )
    if failed is not None:
        records.append(
            {
                "id": failed.item_id,
                "problem": failed.problem,
                "domain": failed.domain,
                "output": None,
                "elapsed": None,
                "provider": "valyu",
                "model": "heavy",
                "meta": {},
                "error": "DeepResearch task ended with status: failed",
            }
        )
    return records


def write_json(path: Path, document: dict) -> Path:
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path
