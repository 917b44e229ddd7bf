"""bench import qa-results: a Nimble SimpleQA raw-results CSV (generated from real SimpleQA rows
in the harness's column layout) joined by question text, graded under its own imported grader
regime, unmatched rows reported; then scored by our QA marts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt_harness import NO_UNIT_TESTS, run_dbt
from nimble_qa_file import nimble_csv

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


@pytest.fixture(scope="module")
def dataset():
    return load_simpleqa(SIMPLEQA)


@pytest.mark.slow  # runs `dbt build`
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
    run_dbt(["build", *NO_UNIT_TESTS, "--select", "+qa_leaderboard"], db, tmp_path)
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
    with pytest.raises(ImportFormatError, match=r"mine.csv: line 2: field grade: expected a grade"):
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
