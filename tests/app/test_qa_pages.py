"""AppTests of the question-answering pages, run through the real `st.navigation` entry point.

The snapshot is `fixture_qa_snapshot.build_qa_fixture_snapshot`, built once per session and
copied into each test's BENCH_HOME. Expectations are read from the snapshot with plain DuckDB.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
from app_harness import APP_SCRIPT, TIMEOUT_S, snapshot_rows
from fixture_qa_snapshot import (
    QaFixture,
    build_qa_empty_snapshot,
    build_qa_fixture_snapshot,
)
from fixture_snapshot import MALICIOUS, build_fixture_snapshot
from streamlit.testing.v1 import AppTest

from app import data

QA_PAGES = {
    "qa_leaderboard": "app_pages/qa_leaderboard.py",
    "qa_compare": "app_pages/qa_compare.py",
    "qa_series": "app_pages/qa_series.py",
    "qa_lineage": "app_pages/qa_lineage.py",
}
RENDERS_MARKDOWN = (
    "markdown",
    "caption",
    "info",
    "warning",
    "error",
    "success",
    "title",
    "subheader",
)


@pytest.fixture(scope="session")
def qa_fixture_source(tmp_path_factory: pytest.TempPathFactory) -> QaFixture:
    return build_qa_fixture_snapshot(tmp_path_factory.mktemp("qa-fixture") / "serve.duckdb")


@pytest.fixture
def qa(bench_home: Path, qa_fixture_source: QaFixture) -> QaFixture:
    target = bench_home / "serve.duckdb"
    shutil.copyfile(qa_fixture_source.serve_db, target)
    return replace(qa_fixture_source, serve_db=target)


def open_qa(page: str, query_params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page(QA_PAGES[page])
    if query_params:
        at.query_params.update(query_params)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def table_with(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def rows(db: Path, sql: str, params: list[Any] | None = None):
    return snapshot_rows(db, sql, params)


# --- empty states --------------------------------------------------------------------------------


def assert_qa_hint(at: AppTest) -> None:
    hints = " ".join(i.value for i in at.info)
    assert "bench run qa --questions demo" in hints, hints
    assert "bench run simpleqa --limit 20" in hints, hints
    assert not at.dataframe


@pytest.mark.parametrize("page", list(QA_PAGES))
def test_no_snapshot_says_how_to_create_the_qa_marts(bench_home: Path, page: str) -> None:
    at = open_qa(page)
    assert_qa_hint(at)
    assert any(str(bench_home / "serve.duckdb") in t.value for t in at.text)


@pytest.mark.parametrize("page", list(QA_PAGES))
def test_snapshot_without_qa_marts_says_how_to_create_them(bench_home: Path, page: str) -> None:
    build_fixture_snapshot(bench_home / "serve.duckdb")  # extraction marts only
    assert_qa_hint(open_qa(page))


def test_empty_qa_marts_say_how_to_fill_them(bench_home: Path) -> None:
    build_qa_empty_snapshot(bench_home / "serve.duckdb")
    assert data.qa_status().state == "empty"
    for page in QA_PAGES:
        assert_qa_hint(open_qa(page))


def test_qa_marts_off_contract_name_the_missing_columns(bench_home: Path) -> None:
    db = bench_home / "serve.duckdb"
    build_qa_empty_snapshot(db)
    with duckdb.connect(str(db)) as con:
        con.execute("alter table marts.qa_leaderboard drop column accuracy_p_adjusted")
    at = open_qa("qa_leaderboard")
    assert any("warehouse-contract" in e.value for e in at.error)
    assert "qa_leaderboard.accuracy_p_adjusted" in [c.value for c in at.code]
    assert not at.dataframe


# --- leaderboard ---------------------------------------------------------------------------------


def test_leaderboard_orders_lanes_and_shows_p_values_vs_the_named_baseline(qa: QaFixture) -> None:
    run1, run2 = qa.run_ids
    at = open_qa("qa_leaderboard")
    assert [t.value for t in at.title] == ["QA leaderboard"]
    assert at.selectbox[0].value == run2  # newest run first
    at = open_qa("qa_leaderboard", {"run": run1})
    assert at.selectbox[0].value == run1
    assert at.selectbox[1].value == qa.grader_id
    assert at.query_params["grader"] == qa.grader_id
    assert any(qa.grader_id in unescape(s.value) and "official" in s.value for s in at.success)

    expected = rows(
        qa.serve_db,
        "select * from marts.qa_leaderboard where run_id = ? and grader_id = ? "
        "order by strict_accuracy desc, lane",
        [run1, qa.grader_id],
    )
    table = table_with(at, "Strict accuracy")
    assert table["Lane"].tolist() == expected["lane"].tolist()
    assert table["Lane"].tolist() == ["brave_search", "tavily_search_basic", "local-bm25"]
    assert table["Strict accuracy"].tolist() == pytest.approx([0.8, 0.75, 0.6])
    assert table["Strict accuracy"].is_monotonic_decreasing
    assert table["Failed"].tolist() == [0, 1, 0]
    assert table["Failure rate"].tolist() == pytest.approx([0.0, 0.2, 0.0])
    assert table["Landed"].tolist() == [5, 4, 5]
    assert table["F1"].tolist() == pytest.approx(expected["f1"].tolist())
    assert table["NDCG@10"].tolist() == pytest.approx(expected["ndcg_10"].tolist())
    assert table["LLM precision@10"].tolist() == pytest.approx(
        expected["llm_precision_10"].tolist()
    )
    assert table["p50 (ms)"].tolist() == pytest.approx(expected["latency_p50_ms"].tolist())
    assert table["$/1k queries"].tolist() == pytest.approx([5.0, 8.0, 0.0])
    assert table["Run cost ($)"].tolist() == pytest.approx([0.025, 0.04, 0.0])
    assert set(table["Price date"]) == {"2026-09-17"}
    assert table["CI"].iloc[0] == (
        f"{expected['strict_accuracy_ci_low'].iloc[0]:.3f}–"
        f"{expected['strict_accuracy_ci_high'].iloc[0]:.3f}"
    )

    # The adjusted p-value of accuracy vs the baseline, the baseline named, nothing for itself.
    significance = rows(
        qa.serve_db,
        "select lane, p_adjusted from marts.fct_qa_significance "
        "where run_id = ? and grader_id = ? and metric = 'accuracy'",
        [run1, qa.grader_id],
    ).set_index("lane")["p_adjusted"]
    shown = table.set_index("Lane")
    for lane in ("brave_search", "tavily_search_basic"):
        assert shown.loc[lane, "p adj. vs baseline"] == pytest.approx(significance[lane])
        assert shown.loc[lane, "vs"] == qa.baseline
        assert shown.loc[lane, "Compare"].startswith("qa_compare?")
    assert shown.loc[qa.baseline, "vs"] == "(baseline)"
    assert shown["p adj. vs baseline"].isna().loc[qa.baseline]

    metrics = {m.label: unescape(m.value) for m in at.metric}
    assert metrics["Baseline lane"] == qa.baseline
    assert metrics["Price snapshot"] == "2026-09-17"
    assert metrics["Failed requests"] == "1"
    caption = unescape(" ".join(c.value for c in at.caption))
    assert "Bonferroni correction over a family of 2 comparison(s)" in caption
    assert f"baseline lane {qa.baseline}" in caption
    assert "price snapshot 2026-09-17, basis list, local" in caption

    every_metric = table_with(at, "p_adjusted")
    assert len(every_metric) == 10  # 2 lanes × 5 metrics
    assert set(every_metric["metric"]) == {"accuracy", "ndcg_10", "recall_10", "mrr", "llm_hit_10"}


def test_leaderboard_breakdowns_and_per_question_links(qa: QaFixture) -> None:
    run1 = qa.run_ids[0]
    at = open_qa("qa_leaderboard", {"run": run1})
    by_topic = table_with(at, "topic").set_index("topic")
    expected = rows(
        qa.serve_db,
        "select lane, value, strict_accuracy, n_questions from marts.fct_qa_breakdowns "
        "where run_id = ? and dimension = 'topic'",
        [run1],
    )
    for row in expected.itertuples():
        assert by_topic.loc[row.value, row.lane] == pytest.approx(row.strict_accuracy, nan_ok=True)
        assert by_topic.loc[row.value, "n"] == row.n_questions
    assert by_topic.loc["history", "local-bm25"] == pytest.approx(0.5)
    by_type = table_with(at, "answer_type").set_index("answer_type")
    assert set(by_type.index) == {"Date", "Number", "Other", "Person"}
    assert pd.isna(by_type.loc["Number", "tavily_search_basic"])  # its only question failed

    lane_box = next(s for s in at.selectbox if s.label == "Lane")
    lane_box.set_value("tavily_search_basic").run()
    assert not at.exception
    per_question = table_with(at, "lineage")
    assert per_question["item_id"].tolist() == qa.questions
    failed = per_question.set_index("item_id").loc[qa.failed["item"]]
    assert failed["outcome"] == "failed" and pd.isna(failed["label"])
    link = per_question["lineage"].iloc[0]
    assert link.startswith("qa_lineage?") and "lane=tavily_search_basic" in link


# --- lane vs lane --------------------------------------------------------------------------------


def test_compare_counts_wins_and_shows_the_pair_significance(qa: QaFixture) -> None:
    run1 = qa.run_ids[0]
    at = open_qa(
        "qa_compare", {"run": run1, "grader": qa.grader_id, "a": "brave_search", "b": qa.baseline}
    )
    assert [t.value for t in at.title] == ["Lane vs lane"]
    assert [s.value for s in at.selectbox] == [run1, qa.grader_id, "brave_search", qa.baseline]
    metrics = {m.label: m.value for m in at.metric}
    # brave CCCIC vs local-bm25 CICNC: A wins question 2, the rest tie.
    assert (metrics["A wins"], metrics["B wins"], metrics["Ties"], metrics["Unpaired"]) == (
        "1",
        "0",
        "4",
        "0",
    )
    pairs = table_with(at, "ndcg_10_diff")
    assert pairs["item_id"].tolist() == qa.questions
    assert pairs["label_a"].tolist() == [
        "correct",
        "correct",
        "correct",
        "incorrect",
        "correct",
    ]
    assert pairs["label_b"].tolist() == [
        "correct",
        "incorrect",
        "correct",
        "not_attempted",
        "correct",
    ]
    assert pairs["answer_b"].iloc[1] == "AssertError"
    expected = rows(
        qa.serve_db,
        "select a.item_id, a.ndcg_10 - b.ndcg_10 as diff from marts.fct_qa_answers a "
        "join marts.fct_qa_answers b using (run_id, item_id) "
        "where a.run_id = ? and a.lane = ? and b.lane = ? order by a.sample_order",
        [run1, "brave_search", qa.baseline],
    )
    assert pairs["ndcg_10_diff"].tolist() == pytest.approx(expected["diff"].tolist())
    assert pairs["lineage_a"].iloc[0].startswith("qa_lineage?")

    shown = table_with(at, "p_adjusted")
    stored = rows(
        qa.serve_db,
        "select metric, p_adjusted from marts.fct_qa_significance "
        "where run_id = ? and lane = 'brave_search' and baseline_lane = ? order by metric",
        [run1, qa.baseline],
    )
    assert dict(zip(shown["metric"], shown["p_adjusted"], strict=True)) == pytest.approx(
        dict(zip(stored["metric"], stored["p_adjusted"], strict=True))
    )
    assert set(shown["lane"]) == {"brave_search"}


def test_compare_unpaired_failure_and_pair_without_a_test(qa: QaFixture) -> None:
    run1 = qa.run_ids[0]
    at = open_qa("qa_compare", {"run": run1, "a": "tavily_search_basic", "b": qa.baseline})
    assert {m.label: m.value for m in at.metric}["Unpaired"] == "1"
    pairs = table_with(at, "ndcg_10_diff").set_index("item_id")
    assert pairs.loc[qa.failed["item"], "result"] == "unpaired"

    at = open_qa("qa_compare", {"run": run1, "a": "tavily_search_basic", "b": "brave_search"})
    assert any("against the baseline lane only" in i.value for i in at.info)
    shown = table_with(at, "p_adjusted")
    assert set(shown["lane"]) == {"tavily_search_basic", "brave_search"}
    assert set(shown["baseline_lane"]) == {qa.baseline}


# --- series --------------------------------------------------------------------------------------


def test_series_shows_accuracy_per_run_summary_and_the_noise_note(qa: QaFixture) -> None:
    at = open_qa("qa_series")
    assert [t.value for t in at.title] == ["QA series"]
    assert at.selectbox[0].value == qa.series
    note = unescape(" ".join(w.value for w in at.warning))
    assert "within ±0.4 points" in note and "not called" in note
    assert "confounded with learning" in note
    charts = at.get("vega_lite_chart")
    assert len(charts) == 1 and "strict accuracy" in charts[0].proto.spec
    # the series curve and its noise band around every run
    marks = [layer["mark"] for layer in json.loads(charts[0].proto.spec)["layer"]]
    assert [m["type"] if isinstance(m, dict) else m for m in marks] == ["area", "line"]

    runs = table_with(at, "Call")
    expected = rows(
        qa.serve_db,
        "select * from marts.fct_series_accuracy where series = ? order by lane, run_index",
        [qa.series],
    )
    assert list(zip(runs["Lane"], runs["Run index"], strict=True)) == list(
        zip(expected["lane"], expected["run_index"], strict=True)
    )
    assert runs["Strict accuracy (%)"].tolist() == pytest.approx(
        (expected["strict_accuracy"] * 100).tolist()
    )
    by_key = runs.set_index(["Lane", "Run index"])
    assert by_key.loc[("brave_search", 2), "Strict accuracy (%)"] == pytest.approx(100.0)
    assert by_key.loc[("brave_search", 2), "Δ vs previous (points)"] == pytest.approx(20.0)
    assert by_key.loc[("brave_search", 2), "Call"] == "outside the noise band"
    assert by_key.loc[("local-bm25", 2), "Call"] == "within ±0.4: not called"
    assert by_key.loc[("local-bm25", 1), "Call"] == "– (first run)"
    assert by_key.loc[("tavily_search_basic", 2), "Run"] == qa.run_ids[1]

    summary = table_with(at, "Range (points)").set_index("Lane")
    assert summary.loc["brave_search", "Accuracy per run (%)"] == "80.0, 100.0"
    assert summary.loc["brave_search", "Mean (%)"] == pytest.approx(90.0)
    assert summary.loc["tavily_search_basic", "Range (points)"] == pytest.approx(5.0)
    assert summary.loc["local-bm25", "Range (points)"] == pytest.approx(0.0)


# --- lineage -------------------------------------------------------------------------------------


def test_lineage_shows_events_raw_body_chunks_answer_and_grader_completion(qa: QaFixture) -> None:
    at = open_qa("qa_lineage", qa.malicious)
    assert [t.value for t in at.title] == ["QA lineage"]
    assert [s.value for s in at.selectbox] == [
        qa.malicious["run"],
        qa.malicious["lane"],
        qa.malicious["item"],
    ]
    assert at.query_params == qa.malicious

    answer = rows(
        qa.serve_db,
        "select * from marts.fct_qa_answers where run_id = ? and lane = ? and item_id = ?",
        [qa.malicious["run"], qa.malicious["lane"], qa.malicious["item"]],
    ).iloc[0]
    ids = [
        answer["search_event_id"],
        answer["chunks_event_id"],
        answer["answer_event_id"],
        answer["grade_event_id"],
    ]
    events = rows(
        qa.serve_db,
        "select *, segment || ':' || line_no as segment_line from marts.dim_events "
        "where list_contains(?::varchar[], event_id)",
        [ids],
    ).set_index("event_id")
    shown = table_with(at, "segment_line").set_index("stage")
    assert shown.loc[["search", "chunks", "answer", "grade"], "event_id"].tolist() == ids
    for stage, event_id in zip(("search", "chunks", "answer", "grade"), ids, strict=True):
        assert shown.loc[stage, "content_sha256"] == events.loc[event_id, "content_sha256"]
        assert shown.loc[stage, "segment_line"] == events.loc[event_id, "segment_line"]
    assert shown.loc["question", "event_type"] == "question_registered"

    codes = [c.value for c in at.code]
    raw_body = json.loads(events.loc[answer["search_event_id"], "payload"])["raw_body"]
    assert raw_body in codes  # the raw search response, verbatim, as text
    grade_payload = json.loads(events.loc[answer["grade_event_id"], "payload"])
    assert grade_payload["llm"]["raw_completion"] in codes
    assert answer["problem"] in codes and answer["gold_answer"] in codes
    assert sum("<script>document.title='pwned'</script>" in c for c in codes) == 2
    assert MALICIOUS in codes[codes.index(grade_payload["llm"]["raw_completion"])]

    chunks = table_with(at, "umbrela_grade")
    assert chunks["rank"].tolist() == list(range(1, 7))
    assert chunks.loc[chunks["url"] == answer_gold_url(qa, answer), "umbrela_grade"].tolist() == [3]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Label"] == "correct"
    assert metrics["NDCG@10"] == f"{answer['ndcg_10']:.3f}"


def answer_gold_url(qa: QaFixture, answer) -> str:
    registered = rows(
        qa.serve_db,
        "select payload from marts.dim_events where run_id = ? and event_type = "
        "'question_registered' and (payload ->> 'item_id') = ?",
        [answer["run_id"], answer["item_id"]],
    )
    return json.loads(registered["payload"].iloc[0])["gold_urls_raw"][0]


def test_lineage_keeps_provider_and_llm_html_inert(qa: QaFixture) -> None:
    at = open_qa("qa_lineage", qa.malicious)
    for kind in RENDERS_MARKDOWN:
        for element in getattr(at, kind):
            assert "<script" not in element.value and "onerror" not in element.value, kind
    for metric in at.metric:
        assert "<" not in metric.value
    assert not at.get("html")


def test_lineage_failed_item_shows_the_error_and_no_answer(qa: QaFixture) -> None:
    at = open_qa("qa_lineage", qa.failed)
    shown = table_with(at, "segment_line").set_index("stage")
    assert shown.loc["search", "event_type"] == "provider_call_failed"
    assert shown.loc["grade", "event_id"] == "–"
    assert "timeout: read timed out after 30.0 s (3 attempts)" in [c.value for c in at.code]
    texts = [t.value for t in at.text]
    assert "No answer was synthesized (the search did not land)." in texts
    assert any("outcome failed" in t and "not graded" in t for t in texts)


def test_lineage_unknown_link_values_fall_back(qa: QaFixture) -> None:
    at = open_qa("qa_lineage", {"run": "' or 1=1 --", "lane": "x'); drop table marts.dim_runs; --"})
    assert any("not in this snapshot" in w.value for w in at.warning)
    assert at.selectbox[0].value in qa.run_ids
    assert not rows(qa.serve_db, "select * from marts.dim_runs").empty


def test_qa_data_functions_take_values_as_parameters(qa: QaFixture) -> None:
    hostile = "x' or '1'='1"
    assert data.qa_status().ready
    assert data.qa_leaderboard(hostile, hostile).empty
    assert data.qa_significance(hostile, hostile).empty
    assert data.qa_compare(hostile, hostile, hostile, "' union select 1 --").empty
    assert data.qa_answer(hostile, hostile, hostile) == []
    assert data.qa_question_event_id(hostile, hostile) is None
    assert data.qa_relevance_grades(hostile, hostile, hostile).empty
    assert data.series_accuracy(hostile, hostile).empty
    assert data.qa_run_lanes(qa.run_ids[0]) == sorted(qa.lanes)
