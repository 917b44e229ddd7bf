"""A Nimble SimpleQA raw-results CSV in the harness's column layout, written from real SimpleQA
rows: what tests/imports/test_qa_import.py and test_qa_regrade.py import."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from collectors.qa.dataset import sample_positions

COLUMNS = [
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
RESULTS = ["is_correct", "is_correct", "is_incorrect", "is_not_attempted"]


def nimble_csv(path: Path, dataset, n: int = 12) -> tuple[Path, list[dict]]:
    rows = []
    for order, position in enumerate(sample_positions(len(dataset.questions), n, 0)):
        q = dataset.questions[position]
        failed = order == 5
        other = {"url": f"https://example.org/{order}", "title": "t", "description": q.gold_answer}
        gold = {"url": q.gold_urls_raw[0], "title": "g", "description": q.gold_answer}
        # the gold source first, second, or not at all: the URL metrics must tell them apart
        chunks = [] if failed else [[gold, other], [other, gold], [other]][order % 3]
        rows.append(
            {
                "provider": "nimble",
                "response_kind": "search",
                # the harness's vendored copy may differ in spacing: joined with whitespace folded
                "query": q.problem if order % 3 else "  " + q.problem.replace(" ", "  ") + " ",
                "ground_truth": q.gold_answer,
                "generated_answer": "" if failed else q.gold_answer,
                "answer_source_used": "synthesized",
                "evaluation_result": "not_evaluated" if failed else RESULTS[order % 4],
                "predicted_urls": json.dumps([c["url"] for c in chunks]),
                "chunks_json": json.dumps(chunks),
                "llm_grades_json": "[]",
                "request_status": "error" if failed else "ok",
                "request_error": "ReadTimeout" if failed else "",
                "request_response_time_ms": 800 + order,
                "answer_type": q.answer_type,
                "topic": q.topic,
            }
        )
    rows.append({**rows[0], "query": "A question that is not in SimpleQA at all?"})
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path, rows
