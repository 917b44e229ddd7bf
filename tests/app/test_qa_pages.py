"""AppTests of the question-answering pages, run through the real `st.navigation` entry point.

The snapshot is `fixture_app_snapshot.build_app_snapshot` (real runs, real dbt build), built once
per session and copied into each test's BENCH_HOME. Expectations are read from the snapshot with
plain DuckDB, or computed from its stored events (tests/app/event_oracle.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import event_oracle
import pandas as pd
import pytest
from app_harness import APP_SCRIPT, TIMEOUT_S, snapshot_rows
from fixture_app_snapshot import MALICIOUS, AppSnapshot, install, install_empty, install_without
from streamlit.testing.v1 import AppTest

from app import data
from warehouse.metric_scales import MISSING

pytestmark = pytest.mark.slow  # the real snapshot: runners -> dlt -> dbt -> publish

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


@pytest.fixture
def qa(bench_home: Path, app_source: AppSnapshot) -> AppSnapshot:
    return replace(app_source, serve_db=install(app_source, bench_home / "serve.duckdb"))


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
def test_snapshot_without_qa_marts_says_how_to_create_them(
    bench_home: Path, app_source: AppSnapshot, page: str
) -> None:
    # a snapshot published before the QA marts existed
    install_without(app_source, bench_home / "serve.duckdb", data.QA_COLUMNS)
    assert_qa_hint(open_qa(page))


def test_empty_qa_marts_say_how_to_fill_them(bench_home: Path, app_source: AppSnapshot) -> None:
    install_empty(app_source, bench_home / "serve.duckdb", data.QA_COLUMNS)
    assert data.qa_status().state == "empty"
    for page in QA_PAGES:
        assert_qa_hint(open_qa(page))


def test_qa_marts_off_contract_name_the_missing_columns(
    bench_home: Path, app_source: AppSnapshot
) -> None:
    db = bench_home / "serve.duckdb"
    install_empty(app_source, db, data.QA_COLUMNS)
    with duckdb.connect(str(db)) as con:
        con.execute("alter table marts.qa_leaderboard drop column accuracy_p_adjusted")
    at = open_qa("qa_leaderboard")
    assert any("warehouse-contract" in e.value for e in at.error)
    assert "qa_leaderboard.accuracy_p_adjusted" in [c.value for c in at.code]
    assert not at.dataframe


# --- leaderboard ---------------------------------------------------------------------------------


def test_leaderboard_orders_lanes_and_shows_p_values_vs_the_named_baseline(qa: AppSnapshot) -> None:
    run1, run2 = qa.qa_run_ids
    at = open_qa("qa_leaderboard")
    assert [t.value for t in at.title] == ["QA leaderboard"]
    assert at.selectbox[0].value == run2  # newest run first
    at = open_qa("qa_leaderboard", {"run": run1})
    assert at.selectbox[0].value == run1
    assert at.selectbox[1].value == qa.grader_id
    assert at.query_params["grader"] == qa.grader_id
    # the fixture's grader is the offline one: named, and never passed off as official
    assert any(
        qa.grader_id in unescape(w.value) and "NOT the official" in w.value for w in at.warning
    )
    assert not at.success

    answers = event_oracle.by_lane(event_oracle.qa_answers(qa.serve_db, run1))
    accuracy = {lane: event_oracle.strict_accuracy(rows) for lane, rows in answers.items()}
    order = sorted(accuracy, key=lambda lane: (-accuracy[lane], lane))
    failed = {lane: sum(not a.landed for a in rows) for lane, rows in answers.items()}
    prices = event_oracle.lane_prices()

    expected = rows(
        qa.serve_db,
        "select * from marts.qa_leaderboard where run_id = ? and grader_id = ? "
        "order by strict_accuracy desc, lane",
        [run1, qa.grader_id],
    )
    table = table_with(at, "Strict accuracy")
    assert table["Lane"].tolist() == order
    assert table["Strict accuracy"].tolist() == pytest.approx([accuracy[lane] for lane in order])
    assert table["Strict accuracy"].is_monotonic_decreasing
    assert table["Failed"].tolist() == [failed[lane] for lane in order]
    assert failed[qa.qa_failed["lane"]] == 1  # the search that never landed
    assert table["Failure rate"].tolist() == pytest.approx(
        [failed[lane] / len(answers[lane]) for lane in order]
    )
    assert table["Landed"].tolist() == [len(answers[lane]) - failed[lane] for lane in order]
    assert table["F1"].tolist() == pytest.approx(expected["f1"].tolist())
    assert table["NDCG@10"].tolist() == pytest.approx(expected["ndcg_10"].tolist())
    assert table["LLM precision@10"].tolist() == pytest.approx(
        expected["llm_precision_10"].tolist()
    )
    assert table["p50 (ms)"].tolist() == pytest.approx(expected["latency_p50_ms"].tolist())
    usd = [float(prices[lane]["usd_per_1k"]) for lane in order]
    assert table["$/1k queries"].tolist() == pytest.approx(usd)
    assert table["Run cost ($)"].tolist() == pytest.approx(
        [price * len(answers[lane]) / 1000 for price, lane in zip(usd, order, strict=True)]
    )
    # a seed row without a date (the offline lanes' demo prices) shows as the missing mark
    snapshot_dates = {prices[lane]["price_snapshot_date"] for lane in order}
    assert set(table["Price date"]) == {date or MISSING for date in snapshot_dates}
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
    others = [lane for lane in qa.lanes if lane != qa.baseline]
    for lane in others:
        assert shown.loc[lane, "p adj. vs baseline"] == pytest.approx(significance[lane])
        assert shown.loc[lane, "vs"] == qa.baseline
        assert shown.loc[lane, "Compare"].startswith("qa_compare?")
    assert shown.loc[qa.baseline, "vs"] == "(baseline)"
    assert shown["p adj. vs baseline"].isna().loc[qa.baseline]

    dated = ", ".join(sorted(filter(None, snapshot_dates)))  # the dates the seed states
    metrics = {m.label: unescape(m.value) for m in at.metric}
    assert metrics["Baseline lane"] == qa.baseline
    assert metrics["Price snapshot"] == dated
    assert metrics["Failed requests"] == str(sum(failed.values()))
    caption = unescape(" ".join(c.value for c in at.caption))
    assert f"Bonferroni correction over a family of {len(others)} comparison(s)" in caption
    assert f"baseline lane {qa.baseline}" in caption
    basis = ", ".join(sorted({prices[lane]["basis"] for lane in order}))
    assert f"price snapshot {dated}, basis {basis}" in caption

    every_metric = table_with(at, "p_adjusted")
    metrics_tested = {"accuracy", "ndcg_10", "recall_10", "mrr", "llm_hit_10"}
    assert len(every_metric) == len(others) * len(metrics_tested)
    assert set(every_metric["metric"]) == metrics_tested


def test_leaderboard_breakdowns_and_per_question_links(qa: AppSnapshot) -> None:
    run1 = qa.qa_run_ids[0]
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

    # per topic and answer type, from the registered questions and the graded answers
    registered = event_oracle.questions(qa.serve_db, run1)
    answers = event_oracle.qa_answers(qa.serve_db, run1)
    by_type = table_with(at, "answer_type").set_index("answer_type")
    for dimension, shown in (("topic", by_topic), ("answer_type", by_type)):
        values = {q[dimension] for q in registered.values()}
        assert set(shown.index) == values
        for value in values:
            items = [i for i, q in registered.items() if q[dimension] == value]
            assert shown.loc[value, "n"] == len(items)
            for lane in qa.lanes:
                oracle = event_oracle.strict_accuracy([answers[(lane, i)] for i in items])
                if oracle is None:  # nothing landed: no accuracy, not a zero
                    assert pd.isna(shown.loc[value, lane]), (value, lane)
                else:
                    assert shown.loc[value, lane] == pytest.approx(oracle), (value, lane)
    # the fixture's premise: the failed search is the only question of its answer type
    failed_type = registered[qa.qa_failed["item"]]["answer_type"]
    assert pd.isna(by_type.loc[failed_type, qa.qa_failed["lane"]])

    lane_box = next(s for s in at.selectbox if s.label == "Lane")
    lane_box.set_value(qa.qa_failed["lane"]).run()
    assert not at.exception
    per_question = table_with(at, "lineage")
    assert per_question["item_id"].tolist() == qa.questions
    failed = per_question.set_index("item_id").loc[qa.qa_failed["item"]]
    assert failed["outcome"] == "failed" and pd.isna(failed["label"])
    link = per_question["lineage"].iloc[0]
    assert link.startswith("qa_lineage?") and f"lane={qa.qa_failed['lane']}" in link


# --- lane vs lane --------------------------------------------------------------------------------


def test_compare_counts_wins_and_shows_the_pair_significance(qa: AppSnapshot) -> None:
    run1 = qa.qa_run_ids[0]
    at = open_qa(
        "qa_compare", {"run": run1, "grader": qa.grader_id, "a": "brave_search", "b": qa.baseline}
    )
    assert [t.value for t in at.title] == ["Lane vs lane"]
    assert [s.value for s in at.selectbox] == [run1, qa.grader_id, "brave_search", qa.baseline]
    answers = event_oracle.qa_answers(qa.serve_db, run1)
    a = [answers[("brave_search", item)] for item in qa.questions]
    b = [answers[(qa.baseline, item)] for item in qa.questions]
    results = [pair_result(x, y) for x, y in zip(a, b, strict=True)]
    assert "win" in results and "tie" in results  # the fixture's premise: the lanes differ
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["A wins"], metrics["B wins"], metrics["Ties"], metrics["Unpaired"]) == tuple(
        str(results.count(r)) for r in ("win", "loss", "tie", "unpaired")
    )
    pairs = table_with(at, "ndcg_10_diff")
    assert pairs["item_id"].tolist() == qa.questions
    assert pairs["label_a"].tolist() == [x.label for x in a]
    assert pairs["label_b"].tolist() == [y.label for y in b]
    assert [None if pd.isna(v) else v for v in pairs["answer_b"]] == [y.answer for y in b]
    assert pairs["result"].tolist() == results
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


def pair_result(a: event_oracle.Answer, b: event_oracle.Answer) -> str:
    """Methodology 2.6's pairing: only questions both lanes landed are won, lost or tied."""
    if not (a.landed and b.landed):
        return "unpaired"
    if (a.label == "correct") != (b.label == "correct"):
        return "win" if a.label == "correct" else "loss"
    return "tie"


def test_compare_unpaired_failure_and_pair_without_a_test(qa: AppSnapshot) -> None:
    run1 = qa.qa_run_ids[0]
    at = open_qa("qa_compare", {"run": run1, "a": "tavily_search_basic", "b": qa.baseline})
    assert {m.label: m.value for m in at.metric}["Unpaired"] == "1"
    pairs = table_with(at, "ndcg_10_diff").set_index("item_id")
    assert pairs.loc[qa.qa_failed["item"], "result"] == "unpaired"

    at = open_qa("qa_compare", {"run": run1, "a": "tavily_search_basic", "b": "brave_search"})
    assert any("against the baseline lane only" in i.value for i in at.info)
    shown = table_with(at, "p_adjusted")
    assert set(shown["lane"]) == {"tavily_search_basic", "brave_search"}
    assert set(shown["baseline_lane"]) == {qa.baseline}


# --- series --------------------------------------------------------------------------------------


def test_series_shows_accuracy_per_run_summary_and_the_noise_note(qa: AppSnapshot) -> None:
    at = open_qa("qa_series")
    assert [t.value for t in at.title] == ["QA series"]
    assert at.selectbox[0].value == qa.series
    note = unescape(" ".join(w.value for w in at.warning))
    assert "within ±0.4 points" in note and "not called" in note
    assert "confounded with learning" in note
    charts = at.get("vega_lite_chart")
    # the series curve, then one per vertical (the questions' topics)
    topics = {q["topic"] for q in event_oracle.questions(qa.serve_db, qa.qa_run_ids[0]).values()}
    assert len(charts) == 1 + len(topics) and "strict accuracy" in charts[0].proto.spec
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
    # per lane and run, from the events: failures count as incorrect in a series (methodology 3)
    accuracy = {
        (lane, index): event_oracle.series_accuracy(answers)
        for index, run_id in enumerate(qa.qa_run_ids, start=1)
        for lane, answers in event_oracle.by_lane(
            event_oracle.qa_answers(qa.serve_db, run_id)
        ).items()
    }
    by_key = runs.set_index(["Lane", "Run index"])
    calls = set()
    for lane in qa.lanes:
        first, second = accuracy[(lane, 1)], accuracy[(lane, 2)]
        assert by_key.loc[(lane, 1), "Strict accuracy (%)"] == pytest.approx(first * 100)
        assert by_key.loc[(lane, 1), "Call"] == "– (first run)"
        assert by_key.loc[(lane, 2), "Strict accuracy (%)"] == pytest.approx(second * 100)
        delta = (second - first) * 100
        assert by_key.loc[(lane, 2), "Δ vs previous (points)"] == pytest.approx(delta)
        call = "within ±0.4: not called" if abs(delta) <= 0.4 else "outside the noise band"
        assert by_key.loc[(lane, 2), "Call"] == call, lane
        assert by_key.loc[(lane, 2), "Run"] == qa.qa_run_ids[1]
        calls.add(call)
    assert len(calls) == 2  # the fixture's premise: one lane steady, another one moved

    summary = table_with(at, "Range (points)").set_index("Lane")
    for lane in qa.lanes:
        per_run = [accuracy[(lane, 1)] * 100, accuracy[(lane, 2)] * 100]
        assert summary.loc[lane, "Accuracy per run (%)"] == ", ".join(f"{v:.1f}" for v in per_run)
        assert summary.loc[lane, "Mean (%)"] == pytest.approx(sum(per_run) / 2)
        assert summary.loc[lane, "Range (points)"] == pytest.approx(max(per_run) - min(per_run))


# --- lineage -------------------------------------------------------------------------------------


def test_lineage_shows_events_raw_body_chunks_answer_and_grader_completion(qa: AppSnapshot) -> None:
    at = open_qa("qa_lineage", qa.qa_malicious)
    assert [t.value for t in at.title] == ["QA lineage"]
    assert [s.value for s in at.selectbox] == [
        qa.qa_malicious["run"],
        qa.qa_malicious["lane"],
        qa.qa_malicious["item"],
    ]
    assert at.query_params == qa.qa_malicious

    answer = rows(
        qa.serve_db,
        "select * from marts.fct_qa_answers where run_id = ? and lane = ? and item_id = ?",
        [qa.qa_malicious["run"], qa.qa_malicious["lane"], qa.qa_malicious["item"]],
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
    stored = json.loads(events.loc[answer["chunks_event_id"], "payload"])["chunks"]
    assert chunks["rank"].tolist() == [c["rank"] for c in stored]
    assert chunks["url"].tolist() == [c["url"] for c in stored]
    judged = {
        p["rank"]: p["grade"]
        for p in event_oracle.payloads(qa.serve_db, "relevance_graded", qa.qa_malicious["run"])
        if (p["lane"], p["item_id"]) == (qa.qa_malicious["lane"], qa.qa_malicious["item"])
    }
    assert chunks["umbrela_grade"].tolist() == [judged[c["rank"]] for c in stored]
    assert answer_gold_url(qa, answer) in chunks["url"].tolist()  # the body that answers it
    label = event_oracle.qa_answers(qa.serve_db, qa.qa_malicious["run"])[
        (qa.qa_malicious["lane"], qa.qa_malicious["item"])
    ].label
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Label"] == label == "correct"
    assert metrics["NDCG@10"] == f"{answer['ndcg_10']:.3f}"


def answer_gold_url(qa: AppSnapshot, answer) -> str:
    registered = rows(
        qa.serve_db,
        "select payload from marts.dim_events where run_id = ? and event_type = "
        "'question_registered' and (payload ->> 'item_id') = ?",
        [answer["run_id"], answer["item_id"]],
    )
    return json.loads(registered["payload"].iloc[0])["gold_urls_raw"][0]


def test_lineage_keeps_provider_and_llm_html_inert(qa: AppSnapshot) -> None:
    at = open_qa("qa_lineage", qa.qa_malicious)
    for kind in RENDERS_MARKDOWN:
        for element in getattr(at, kind):
            assert "<script" not in element.value and "onerror" not in element.value, kind
    for metric in at.metric:
        assert "<" not in metric.value
    assert not at.get("html")


def test_lineage_failed_item_shows_the_error_and_no_answer(qa: AppSnapshot) -> None:
    at = open_qa("qa_lineage", qa.qa_failed)
    shown = table_with(at, "segment_line").set_index("stage")
    assert shown.loc["search", "event_type"] == "provider_call_failed"
    assert shown.loc["grade", "event_id"] == "–"
    (search,) = [
        p
        for p in event_oracle.payloads(qa.serve_db, "provider_call_failed", qa.qa_failed["run"])
        if (p["lane"], p["item_id"], p["stage"])
        == (qa.qa_failed["lane"], qa.qa_failed["item"], "search")
    ]
    assert search["http_attempts"] == 3  # the policy's attempts, every one refused
    assert f"{search['error_class']}: {search['error_message']}" in [c.value for c in at.code]
    texts = [t.value for t in at.text]
    assert "outcome failed" in texts  # the answer stage records the failure, no answer
    assert any("outcome failed" in t and "not graded" in t for t in texts)


def test_lineage_failed_grade_shows_the_error_and_the_least_favourable_grade(
    qa: AppSnapshot,
) -> None:
    """A grader call that failed (the fixture grader's 529) is a grade event with outcome
    failed: the page says so, shows the error verbatim, and the answer counts as incorrect."""
    target = qa.qa_failed_grade
    at = open_qa("qa_lineage", target)
    (failed,) = [
        p
        for p in event_oracle.payloads(qa.serve_db, "answer_graded", target["run"])
        if (p["lane"], p["item_id"]) == (target["lane"], target["item"])
    ]
    assert (failed["outcome"], failed["grade"], failed["llm"]) == ("failed", "B", None)
    texts = [t.value for t in at.text]
    assert any("grader call failed (http_status)" in t and "B / incorrect" in t for t in texts)
    assert failed["error_message"] in [c.value for c in at.code]
    assert "(HTTP 529)" in failed["error_message"]
    shown = table_with(at, "segment_line").set_index("stage")
    assert shown.loc["grade", "event_type"] == "answer_graded"
    assert {m.label: m.value for m in at.metric}["Label"] == "incorrect"


def test_lineage_unknown_link_values_fall_back(qa: AppSnapshot) -> None:
    at = open_qa("qa_lineage", {"run": "' or 1=1 --", "lane": "x'); drop table marts.dim_runs; --"})
    assert any("not in this snapshot" in w.value for w in at.warning)
    assert at.selectbox[0].value in qa.qa_run_ids
    assert not rows(qa.serve_db, "select * from marts.dim_runs").empty


def test_qa_data_functions_take_values_as_parameters(qa: AppSnapshot) -> None:
    hostile = "x' or '1'='1"
    assert data.qa_status().ready
    assert data.qa_leaderboard(hostile, hostile).empty
    assert data.qa_significance(hostile, hostile).empty
    assert data.qa_compare(hostile, hostile, hostile, "' union select 1 --").empty
    assert data.qa_answer(hostile, hostile, hostile) == []
    assert data.qa_question_event_id(hostile, hostile) is None
    assert data.qa_relevance_grades(hostile, hostile, hostile).empty
    assert data.series_accuracy(hostile, hostile).empty
    assert data.qa_run_lanes(qa.qa_run_ids[0]) == sorted(qa.lanes)
