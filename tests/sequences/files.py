"""Import files a user could be handed, in every format `bench import` reads (docs/imports.md).

Each writer takes what the sequence drew (items, seeds, names) and writes a file of that
format over real items: the demo extraction corpus, the pinned DRACO test split, the demo
question set. Contents vary with the draw, so two draws are two different files (two import
runs); the same file imported again is the user repeating an import (a no-op by design).
DRACO grading files come from tests/imports/valyu_fixture.py, which computes every published
figure the way the other harness does.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Any

from tests.imports.valyu_fixture import valyu_grading, valyu_inference, write_json, write_jsonl

NIMBLE_QA_COLUMNS = [
    "provider",
    "response_kind",
    "query",
    "ground_truth",
    "generated_answer",
    "answer_source_used",
    "evaluation_result",
    "predicted_urls",
    "chunks_json",
    "llm_grades_json",
    "request_status",
    "request_error",
    "request_response_time_ms",
    "answer_type",
    "topic",
]
NIMBLE_RESULTS = ["is_correct", "is_incorrect", "is_not_attempted", "not_evaluated"]
LETTER_GRADES = ["A", "B", "C"]
WORD_GRADES = ["correct", "incorrect", "not_attempted"]


def extraction_predictions(path: Path, items: list, seed: int, version: str) -> Path:
    """The upstream wrapped layout {version, output: {id: {articleBody}}}: bodies are the truth
    cut at a random point (a partial extraction), sometimes null (the system returned nothing);
    corpus items left out become `missing_prediction` failures."""
    rng = random.Random(seed)
    output: dict[str, dict[str, Any]] = {}
    for item in items:
        text = item.truth_text
        body = None if rng.random() < 0.15 else text[: max(1, int(len(text) * rng.random()))]
        output[item.item_id] = {"articleBody": body}
    return write_json(path, {"version": version, "output": output})


def draco_valyu_grading(path: Path, tasks: list, seed: int, runs: int) -> Path:
    errored = tasks[-1] if len(tasks) > 1 and seed % 3 == 0 else None
    graded = [t for t in tasks if t is not errored]
    return write_json(
        path, valyu_grading(graded, runs=runs, seed=seed, errored=errored, unmatched=seed % 2 == 0)
    )


def draco_valyu_inference(path: Path, tasks: list, seed: int) -> Path:
    failed = tasks[-1] if len(tasks) > 1 and seed % 2 == 0 else None
    reported = [t for t in tasks if t is not failed]
    records = valyu_inference(reported, failed=failed)
    for record in records:  # the seed is in the text: another draw is another file
        if record["output"]:
            record["output"] += f"\n<!-- draw {seed} -->\n"
    return write_jsonl(path, records)


def draco_nimble(path: Path, tasks: list, seed: int) -> Path:
    """Nimble harness results/<system>.jsonl: met rates over 3 judge samples, an answer (the
    judged report) per task, sometimes an errored record first (the harness retried it)."""
    rng = random.Random(seed)
    records = []
    for task in tasks:
        if rng.random() < 0.3:
            records.append(_nimble_draco_record(task, rng, error="TimeoutError: judge"))
        records.append(_nimble_draco_record(task, rng))
    return write_jsonl(path, records)


def _nimble_draco_record(task, rng: random.Random, error: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "item_id": task.item_id,
        "system": "nimble/high",
        "domain": task.domain,
        "error": error,
        "overall": round(rng.random(), 4),
        "axes": {},
    }
    if error:
        return record
    verdicts = [
        {
            "axis": c.axis,
            "id": c.criterion_id,
            "weight": c.weight,
            "requirement": c.requirement,
            "met": rng.choice([0.0, 1 / 3, 2 / 3, 1.0]),
            "why": "synthetic",
        }
        for c in task.criteria
    ]
    return record | {
        "verdicts": verdicts,
        "judge_samples": 3,
        "latency_s": round(5 + 60 * rng.random(), 2),
        "cost_usd": round(rng.random(), 3),
        "answer": f"Report {rng.random():.6f}\n\n## Sources\n[1] a — https://a.example/{task.item_id}",
    }


def draco_long_csv(
    path: Path, tasks: list, seed: int, samples: int, *, by_id: bool = False
) -> Path:
    """One verdict a row; criteria named by their position, or by the dataset's criterion ids."""
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        criterion = "criterion_id" if by_id else "criterion_position"
        writer.writerow(["task_id", criterion, "verdict", "sample", "justification"])
        for task in tasks:
            for sample in range(1, samples + 1):
                for c in task.criteria:
                    verdict = rng.choice(["MET", "UNMET", "met", "unmet"])
                    named = c.criterion_id if by_id else c.position
                    writer.writerow([task.item_id, named, verdict, sample, f"draw {seed}"])
    return path


def qa_nimble(path: Path, questions: list, seed: int) -> Path:
    rng = random.Random(seed)
    rows = []
    for order, q in enumerate(questions):
        failed = rng.random() < 0.15
        other = {"url": f"https://example.org/{seed}/{order}", "title": "t", "description": "d"}
        gold = {"url": q.gold_urls_raw[0], "title": "g", "description": q.gold_answer}
        chunks = [] if failed else rng.choice([[gold, other], [other, gold], [other]])
        rows.append(
            {
                "provider": "nimble",
                "response_kind": "search",
                "query": q.problem,
                "ground_truth": q.gold_answer,
                "generated_answer": "" if failed else rng.choice([q.gold_answer, "unsure"]),
                "answer_source_used": "synthesized",
                "evaluation_result": "not_evaluated" if failed else rng.choice(NIMBLE_RESULTS),
                "predicted_urls": json.dumps([c["url"] for c in chunks]),
                "chunks_json": json.dumps(chunks),
                "llm_grades_json": "[]",
                "request_status": "error" if failed else "ok",
                "request_error": "ReadTimeout" if failed else "",
                "request_response_time_ms": rng.randint(200, 3000),
                "answer_type": q.answer_type or "",
                "topic": q.topic or "",
            }
        )
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=NIMBLE_QA_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def qa_simple_evals(path: Path, questions: list, seed: int) -> Path:
    rng = random.Random(seed)
    convos, per_row = [], []
    for q in questions:
        answer = rng.choice([q.gold_answer, "I don't know", f"not {q.gold_answer}"])
        convos.append(
            [{"role": "user", "content": q.problem}, {"role": "assistant", "content": answer}]
        )
        per_row.append({"grade": rng.choice(LETTER_GRADES)})
    correct = sum(1 for m in per_row if m["grade"] == "A") / len(per_row)
    document = {
        "score": correct,
        "metrics": {"is_correct": correct, "draw": seed},
        "convos": convos,
        "metadata": {"example_level_metadata": per_row},
    }
    return write_json(path, document)


def qa_long_csv(path: Path, questions: list, seed: int, with_urls: bool) -> Path:
    rng = random.Random(seed)
    columns = ["question", "answer", "grade"] + (["urls", "latency_ms"] if with_urls else [])
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for q in questions:
            row = [q.problem, rng.choice([q.gold_answer, "no idea"]), rng.choice(WORD_GRADES)]
            if with_urls:
                urls = [q.gold_urls_raw[0], f"https://example.org/{seed}"]
                rng.shuffle(urls)
                row += [" ".join(urls), str(rng.randint(100, 5000))]
            writer.writerow(row)
    return path


QA_JSONL_MAP = "question=problem,answer=predicted,grade=grade,latency_s=latency"


def qa_mapped_jsonl(path: Path, questions: list, seed: int) -> Path:
    """The common per-row SimpleQA shape (docs/examples/simpleqa_results.jsonl: `problem`, gold
    `answer`, `predicted`, a `grade` letter, `latency` in seconds), read through `QA_JSONL_MAP`."""
    rng = random.Random(seed)
    records = [
        {
            "problem": q.problem,
            "answer": q.gold_answer,
            "predicted": rng.choice([q.gold_answer, "unsure", f"draw {seed}"]),
            "grade": rng.choice(LETTER_GRADES),
            "latency": round(0.2 + 3 * rng.random(), 2),
            "topic": q.topic or "",
            "answer_type": q.answer_type or "",
        }
        for q in questions
    ]
    return write_jsonl(path, records)


CORRECTION_COLUMNS = [
    "kind",
    "target",
    "reason",
    "benchmark",
    "replacement",
    "run_id",
    "dataset_sha256",
    "reinstate",
]


def corrections_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CORRECTION_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({column: row.get(column, "") for column in CORRECTION_COLUMNS})
    return path
