"""bench import qa-results: a Nimble SimpleQA raw-results CSV (generated from real SimpleQA rows
in the harness's column layout) joined by question text, graded under its own imported grader
regime, unmatched rows reported; then scored by our QA marts."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from dbt_harness import run_dbt

from collectors.imports.qa_results import import_qa_results
from collectors.imports.source_file import ImportFormatError
from collectors.qa.dataset import sample_positions
from collectors.qa.simpleqa import load_simpleqa
from ingest.pipeline import ingest_log
from warehouse.log import EventLog

SIMPLEQA = (
    Path(__file__).resolve().parents[2]
    / ".."
    / "shared"
    / "data"
    / "simpleqa"
    / "simple_qa_test_set.csv"
)
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


@pytest.fixture(scope="module")
def dataset():
    return load_simpleqa(SIMPLEQA)


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


def test_nimble_rows_join_by_text_and_score_under_the_imported_grader(tmp_path, dataset):
    path, rows = nimble_csv(tmp_path / "dataset_simpleqa_raw_results_nimble_search.csv", dataset)
    log = EventLog(tmp_path / "log")
    summary = import_qa_results(
        log, path, fmt="nimble", lane="nimble_search", dataset=dataset, grader_label="gpt-4o"
    )
    assert summary.judge_id == "imported:nimble:gpt-4o"
    assert summary.unmatched_ids == ["#13: A question that is not in SimpleQA at all?"]
    assert summary.completed == 11 and summary.failed == 1
    db = tmp_path / "w.duckdb"
    assert not ingest_log(log, db, tmp_path / "dlt").quarantined
    run_dbt(["build", "--select", "+qa_leaderboard"], db, tmp_path)
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        (row,) = con.execute(
            "select grader_id, n_questions, n_failed, n_landed, strict_accuracy "
            "from marts.qa_leaderboard where run_id = ?",
            [summary.run_id],
        ).fetchall()
        retrieval = con.execute(
            "select q.sample_order, r.mrr, r.hit_10 from intermediate.int_qa_retrieval_scored r "
            "join staging.stg_events__question_registered q using (run_id, item_id) "
            "where r.run_id = ? order by q.sample_order",
            [summary.run_id],
        ).fetchall()
        positions = con.execute(
            "select row_position from staging.stg_events__question_registered where run_id = ? "
            "order by sample_order",
            [summary.run_id],
        ).fetchall()
    # the imported URLs are scored by the same URL metrics as our lanes' (MRR by gold rank)
    assert [(order, mrr, hit) for order, mrr, hit in retrieval] == [
        (order, [1.0, 0.5, 0.0][order % 3], order % 3 != 2) for order in range(12) if order != 5
    ]
    graded = [r for r in rows[:12] if r["evaluation_result"] != "not_evaluated"]
    correct = sum(r["evaluation_result"] == "is_correct" for r in graded)
    assert row[0] == "imported:nimble:gpt-4o"
    assert row[1:4] == (12, 1, 11)
    assert row[4] == pytest.approx(correct / len(graded))
    # upstream row identity kept: the seed-0 sample order of the file
    assert [p[0] for p in positions] == sample_positions(len(dataset.questions), 12, 0)


def test_long_csv_bad_grade_names_row(tmp_path, dataset):
    path = tmp_path / "mine.csv"
    path.write_text(f'question,answer,grade\n"{dataset.questions[0].problem}",x,maybe\n')
    with pytest.raises(ImportFormatError, match=r"row 1\.grade"):
        import_qa_results(EventLog(tmp_path / "l"), path, fmt="csv", lane="l", dataset=dataset)


def test_simple_evals_needs_per_row_grades(tmp_path, dataset):
    path = tmp_path / "simpleqa_allresults.json"
    q = dataset.questions[0]
    convo = [
        {"role": "user", "content": q.problem},
        {"role": "assistant", "content": q.gold_answer},
    ]
    path.write_text(json.dumps({"score": 1.0, "metrics": {"is_correct": 1.0}, "convos": [convo]}))
    with pytest.raises(ImportFormatError, match="example_level_metadata"):
        import_qa_results(
            EventLog(tmp_path / "l"), path, fmt="simple-evals", lane="l", dataset=dataset
        )
    path.write_text(
        json.dumps(
            {
                "score": 1.0,
                "metrics": {"is_correct": 1.0},
                "convos": [convo],
                "metadata": {"example_level_metadata": [{"grade": "A"}]},
            }
        )
    )
    summary = import_qa_results(
        EventLog(tmp_path / "l2"), path, fmt="simple-evals", lane="l", dataset=dataset
    )
    assert summary.completed == 1 and summary.header["score"] == 1.0
