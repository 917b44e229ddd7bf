"""AppTests of the deep-research (DRACO) pages, run through the real `st.navigation` entry point.

The snapshot comes from real runner events (`fixture_draco_snapshot`: offline demo tasks, two
lanes, four judge regimes (the last a real LLM judge over a loopback fake), a planted HTML/JS
payload), ingested, built and published once per
session and copied into each test's BENCH_HOME. Expectations are read from the published marts
with plain DuckDB, never through app.data.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from urllib.parse import urlencode

import pandas as pd
import pytest
from app_harness import APP_SCRIPT, TIMEOUT_S, snapshot_rows
from fixture_app_snapshot import AppSnapshot, install_without
from fixture_app_snapshot import install as install_app
from fixture_draco_snapshot import (
    PAYLOADS,
    PLANTED_LANE,
    UNPARSED_PAYLOAD,
    DracoSnapshot,
    draco_snapshot,
    install,
)
from streamlit.testing.v1 import AppTest

from app import data
from collectors.draco.systems import LANES, price_for
from warehouse.bodies import expand_body, marker, text_sha256

pytestmark = pytest.mark.slow  # one real dbt build per session

DRACO_PAGES = {
    "draco_leaderboard": "app_pages/draco_leaderboard.py",
    "draco_criteria": "app_pages/draco_criteria.py",
    "draco_lineage": "app_pages/draco_lineage.py",
}
RENDERS_MARKDOWN = (
    "markdown",
    "caption",
    "info",
    "warning",
    "error",
    "success",
    "title",
    "header",
    "subheader",
)


@pytest.fixture(scope="session")
def draco_source(tmp_path_factory: pytest.TempPathFactory) -> DracoSnapshot:
    return draco_snapshot(tmp_path_factory)


@pytest.fixture
def draco(bench_home: Path, draco_source: DracoSnapshot) -> Path:
    return install(draco_source, bench_home)


def open_page(page: str, query_params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    if page != "overview":
        at.switch_page(DRACO_PAGES[page])
    if query_params:
        at.query_params.update(query_params)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def tables_with(at: AppTest, column: str) -> list[pd.DataFrame]:
    return [d.value for d in at.dataframe if column in d.value.columns]


def table_with(at: AppTest, column: str) -> pd.DataFrame:
    found = tables_with(at, column)
    assert found, f"no table with a {column!r} column"
    return found[0]


def close(a, b) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return b is not None and math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)


def assert_inert(at: AppTest) -> None:
    for kind in RENDERS_MARKDOWN:
        for element in getattr(at, kind):
            for needle in ("<script", "onerror", "<img", "<b>"):
                assert needle not in str(element.value), (kind, element.value)
    for metric in at.metric:
        assert "<" not in str(metric.value)
    assert not at.get("html")


# --- empty states --------------------------------------------------------------------------------


def assert_draco_hint(at: AppTest) -> None:
    hints = " ".join(i.value for i in at.info)
    assert "bench run draco --tasks demo" in hints, hints
    assert not at.dataframe


@pytest.mark.parametrize("page", list(DRACO_PAGES))
def test_no_snapshot_says_how_to_create_the_draco_marts(bench_home: Path, page: str) -> None:
    at = open_page(page)
    assert_draco_hint(at)
    assert any(str(bench_home / "serve.duckdb") in t.value for t in at.text)


@pytest.mark.parametrize("page", list(DRACO_PAGES))
def test_snapshot_without_draco_marts_says_how_to_create_them(
    bench_home: Path, app_source: AppSnapshot, page: str
) -> None:
    # a snapshot published before the DRACO marts existed
    install_without(app_source, bench_home / "serve.duckdb", data.DRACO_COLUMNS)
    assert data.draco_status().state == "absent"
    assert_draco_hint(open_page(page))


def test_overview_links_the_draco_pages_only_when_there_are_rows(
    bench_home: Path, app_source: AppSnapshot
) -> None:
    install_app(app_source, bench_home / "serve.duckdb")  # DRACO marts built, no DRACO run
    at = open_page("overview")
    assert not [link for link in at.get("page_link") if "draco" in str(link.proto.page)]


def test_overview_links_the_draco_pages(draco: Path) -> None:
    at = open_page("overview")
    pages = [str(link.proto.page) for link in at.get("page_link")]
    assert sum("draco_" in page for page in pages) == 3, pages


# --- leaderboard ---------------------------------------------------------------------------------


def test_leaderboard_one_table_per_judge_regime_with_the_mart_numbers(
    draco: Path, draco_source: DracoSnapshot
) -> None:
    at = open_page("draco_leaderboard", {"run": draco_source.run_id})
    assert_inert(at)
    judges = snapshot_rows(
        draco,
        "select judge_id from marts.draco_leaderboard where run_id = ? group by judge_id "
        "order by bool_and(judge_official) desc, judge_id",
        [draco_source.run_id],
    )["judge_id"].tolist()
    assert sorted(judges) == sorted(draco_source.judge_ids)
    boards = tables_with(at, "Rank")
    assert len(boards) == len(judges) == len(draco_source.judge_ids) == 4
    regime_lines = [t.value for t in at.text if t.value.startswith("judge regime ")]
    assert len(regime_lines) == 4
    for judge_id, board, line in zip(judges, boards, regime_lines, strict=True):
        assert f"judge regime {judge_id} ·" in line
        expected = snapshot_rows(
            draco,
            "select * from marts.draco_leaderboard where run_id = ? and judge_id = ? "
            "order by rank_score, lane",
            [draco_source.run_id, judge_id],
        )
        assert board["System"].tolist() == expected["lane"].tolist()
        assert set(board["System"]) == set(draco_source.lanes)
        for shown, row in zip(board.to_dict("records"), expected.to_dict("records"), strict=True):
            assert close(shown["Score"], 100 * row["score_mean"])
            assert close(shown["Factual accuracy"], 100 * row["factual_accuracy_mean"])
            assert close(shown["Pass rate"], 100 * row["pass_rate_mean"])
            assert close(shown["Citation"], 100 * row["citation_quality_mean"])
            assert shown["CI (score)"] == (
                f"{100 * row['score_ci_low']:.1f}–{100 * row['score_ci_high']:.1f}"
            )
            assert (shown["n"], shown["Failed"], shown["Incomplete"]) == (
                row["n_items"],
                row["n_failed"],
                row["n_incomplete"],
            )
            assert shown["Flagged samples"] == row["n_unparsed_samples"] + row["n_failed_samples"]
            assert close(shown["Mean latency (s)"], row["latency_mean_s"])
            assert close(shown["Cost per task ($)"], row["cost_mean_usd"])
            # the research_prices seed prices local-rag's unbilled reports with its demo price
            # (collectors.draco.systems.price_for); the planted lane has no seed row: no cost
            price, basis, _ = price_for(row["lane"]) if row["lane"] in LANES else (None,) * 3
            # (the page shows a missing basis as NaN, the mart as None: both mean "no price")
            assert [
                None if pd.isna(b) else b for b in (shown["Cost basis"], row["cost_basis"])
            ] == [
                basis,
                basis,
            ]
            assert close(row["cost_mean_usd"], price)
            assert urlencode({"judge": judge_id}) in shown["Lineage"]
    # the planted lane failed five of six tasks under every regime (scored 0, still in n)
    planted = [b.set_index("System").loc[PLANTED_LANE] for b in boards]
    assert [(p["n"], p["Failed"]) for p in planted] == [(6, 5)] * 4
    # the flaky regime flags its unparsed and failed samples; the offline ones flag none
    flagged = {j: int(b["Flagged samples"].sum()) for j, b in zip(judges, boards, strict=True)}
    assert flagged[draco_source.judge_ids[2]] > 0
    assert flagged[draco_source.judge_ids[0]] == flagged[draco_source.judge_ids[1]] == 0
    assert flagged[draco_source.judge_ids[3]] == 0
    assert any("NOT an official judge regime" in w.value for w in at.warning)


def test_leaderboard_domain_and_significance_tables_equal_the_marts(
    draco: Path, draco_source: DracoSnapshot
) -> None:
    judge_id = draco_source.judge_ids[0]
    at = open_page("draco_leaderboard", {"run": draco_source.run_id, "judge": judge_id})
    assert len(tables_with(at, "Rank")) == 1  # ?judge= shows that regime only
    domains = table_with(at, "domain")
    expected = snapshot_rows(
        draco,
        "select * from marts.fct_draco_domains where run_id = ? and judge_id = ? "
        "order by domain, lane",
        [draco_source.run_id, judge_id],
    )
    assert domains["lane"].tolist() == expected["lane"].tolist()
    assert all(
        close(a, 100 * b)
        for a, b in zip(domains["score_points"], expected["score_mean"], strict=True)
    )
    significance = table_with(at, "p_ttest_adjusted")
    tests = snapshot_rows(
        draco,
        "select * from marts.fct_draco_significance where run_id = ? and judge_id = ?",
        [draco_source.run_id, judge_id],
    )
    assert len(significance) == len(tests) == 1
    shown, row = significance.iloc[0], tests.iloc[0]
    assert (shown["lane_a"], shown["lane_b"]) == ("local-rag", PLANTED_LANE)
    assert close(shown["p_ttest_adjusted"], row["p_ttest_adjusted"])
    assert close(shown["p_wilcoxon"], row["p_wilcoxon"])
    # score means on the leaderboard's scale (points out of 100, warehouse/metric_scales.py)
    assert close(shown["mean_diff"], 100 * row["mean_diff"]) and shown["mean_diff"] > 0
    assert close(shown["mean_a"], 100 * row["mean_a"])
    assert bool(shown["significant"]) == bool(row["significant"])


# --- criteria ------------------------------------------------------------------------------------


def test_criteria_rank_splitting_noisy_and_judge_disputed_criteria(
    draco: Path, draco_source: DracoSnapshot
) -> None:
    at = open_page("draco_criteria", {"run": draco_source.run_id})
    assert_inert(at)
    agreement = snapshot_rows(
        draco,
        "select * from marts.fct_draco_criterion_agreement where run_id = ?",
        [draco_source.run_id],
    )
    split, noisy, across = tables_with(at, "noisy_share")  # the three ranked sections, in order
    expected_split = agreement[agreement["stddev_v"].notna()]
    assert len(split) == len(expected_split) > 0
    assert split["stddev_v"].tolist() == sorted(split["stddev_v"], reverse=True)
    assert len(noisy) == int((agreement["noisy_share"] > 0).sum()) > 0  # the flaky samples
    assert (noisy["noisy_share"] > 0).all()
    assert len(across) == int(agreement["judge_disagreement_share"].notna().sum())
    top = across.iloc[0]
    want = agreement.set_index(["item_id", "criterion_id"]).loc[
        (top["item_id"], top["criterion_id"])
    ]
    assert close(top["judge_disagreement_share"], want["judge_disagreement_share"])
    assert top["judge_disagreement_share"] > 0
    groups = table_with(at, "n_met")
    assert {"lane", "judge_id", "v", "passed", "lineage"} <= set(groups.columns)


def test_criteria_filters_by_axis_and_polarity(draco: Path, draco_source: DracoSnapshot) -> None:
    at = open_page(
        "draco_criteria",
        {"run": draco_source.run_id, "axis": "factual-accuracy", "polarity": "negative"},
    )
    expected = snapshot_rows(
        draco,
        "select * from marts.fct_draco_criterion_agreement where run_id = ? "
        "and axis = 'factual-accuracy' and polarity = 'negative'",
        [draco_source.run_id],
    )
    assert at.metric[0].value == str(len(expected)) and len(expected) > 0
    for table in at.dataframe:
        frame = table.value
        if "polarity" in frame.columns and "axis" in frame.columns:
            assert set(frame["polarity"]) <= {"negative"}
            assert set(frame["axis"]) <= {"factual-accuracy"}


# --- lineage -------------------------------------------------------------------------------------


def lineage_params(source: DracoSnapshot, judge: int, lane: str, item: str) -> dict[str, str]:
    return {"run": source.run_id, "judge": source.judge_ids[judge], "lane": lane, "item": item}


def test_lineage_shows_criteria_samples_justifications_and_reports_as_text(
    draco: Path, draco_source: DracoSnapshot
) -> None:
    params = lineage_params(draco_source, 2, PLANTED_LANE, draco_source.planted_item_id)
    at = open_page("draco_lineage", params)
    assert_inert(at)
    key = [
        draco_source.run_id,
        PLANTED_LANE,
        draco_source.judge_ids[2],
        draco_source.planted_item_id,
    ]
    item = snapshot_rows(
        draco,
        "select * from marts.fct_draco_items where run_id = ? and lane = ? and judge_id = ? "
        "and item_id = ?",
        key,
    ).iloc[0]
    assert at.metric[0].value == f"{100 * item['score']:.1f}"

    criteria = table_with(at, "criterion_position")
    expected = snapshot_rows(
        draco,
        "select * from marts.fct_draco_criteria where run_id = ? and lane = ? and judge_id = ? "
        "and item_id = ? order by criterion_position",
        key,
    )
    assert criteria["criterion_id"].tolist() == expected["criterion_id"].tolist()
    assert all(close(a, b) for a, b in zip(criteria["v"], expected["v"], strict=True))
    assert criteria["passed"].tolist() == expected["passed"].tolist()
    assert criteria["weight"].tolist() == expected["weight"].tolist()

    samples = table_with(at, "justification")
    verdicts = snapshot_rows(
        draco,
        "select * from marts.fct_draco_verdict_samples where run_id = ? and lane = ? "
        "and judge_id = ? and item_id = ?",
        key,
    )
    assert len(samples) == len(verdicts)
    assert set(samples["verdict_event_id"]) == set(verdicts["verdict_event_id"])
    parsed = verdicts[verdicts["outcome"] == "parsed"]
    assert set(parsed["justification"]) <= set(samples["justification"].dropna())
    assert any(str(j).startswith("sample 2: ") for j in samples["justification"].dropna())
    unparsed = samples[samples["outcome"] == "unparsed"]
    assert len(unparsed) == 2 and unparsed["flagged"].all()
    assert set(unparsed["raw_completion"]) == {UNPARSED_PAYLOAD}
    superseded = samples[~samples["is_latest_attempt"].astype(bool)]
    assert set(superseded["outcome"]) == {"failed"}  # retried as judge attempt 2

    report = snapshot_rows(
        draco,
        "select * from marts.fct_draco_reports where run_id = ? and lane = ? and item_id = ? "
        "and status = 'reported'",
        [draco_source.run_id, PLANTED_LANE, draco_source.planted_item_id],
    ).iloc[0]
    codes = [c.value.strip() for c in at.code]  # st.code drops a trailing newline
    assert report["raw_output"].strip() in codes and report["judged_text"].strip() in codes
    assert all(payload in report["raw_output"] for payload in PAYLOADS)
    citations = table_with(at, "title")
    assert any(PAYLOADS[1] in title for title in citations["title"])

    events = table_with(at, "content_sha256").set_index("stage")
    assert events.loc["research", "event_id"] == report["research_event_id"]
    assert events.loc["report", "event_id"] == report["report_event_id"]
    stored = snapshot_rows(
        draco,
        "select event_id, content_sha256 from marts.dim_events where event_id = ?",
        [report["research_event_id"]],
    )
    assert events.loc["research", "content_sha256"] == stored["content_sha256"].iloc[0]
    assert events.loc["research failed", "event_id"] == "–"
    assert events.index.str.startswith("verdict ").sum() == len(verdicts)


def test_lineage_shows_each_judge_request_with_the_stored_report_put_back(
    draco: Path, draco_source: DracoSnapshot
) -> None:
    """The LLM judge's verdict events reference the judged report instead of holding it; the
    lineage shows the full prompt as sent, rebuilt from the report event and checked against
    the sha256 of the bytes sent."""
    key = [draco_source.run_id, PLANTED_LANE, draco_source.judge_ids[3]]
    key.append(draco_source.planted_item_id)
    verdicts = snapshot_rows(
        draco,
        "select verdict_event_id, source_event_id from marts.fct_draco_verdict_samples "
        "where run_id = ? and lane = ? and judge_id = ? and item_id = ? order by criterion_id",
        key,
    )
    chosen = verdicts.iloc[-1]
    stored = snapshot_rows(
        draco,
        "select event_id, payload from marts.dim_events where event_id in (?, ?)",
        [chosen["verdict_event_id"], chosen["source_event_id"]],
    ).set_index("event_id")["payload"]
    judged_text = json.loads(stored[chosen["source_event_id"]])["judged_text"]
    verdict = json.loads(stored[chosen["verdict_event_id"]])
    request = verdict["llm"]["request"]
    assert judged_text not in stored[chosen["verdict_event_id"]]  # referenced, not copied
    assert marker(text_sha256(judged_text)) in request["body"]
    sent = json.loads(expand_body(request, [judged_text]))
    (prompt,) = [m["content"] for m in sent["messages"]]
    assert judged_text in prompt and all(payload in prompt for payload in PAYLOADS)
    # the `bench sql` recipe of docs/warehouse-contract.md gives the same prompt
    docs = (Path(__file__).resolve().parents[2] / "docs" / "warehouse-contract.md").read_text()
    (recipe,) = [sql for sql in re.findall(r"```sql\n(.*?)```", docs, re.S) if "<<stored" in sql]
    assert snapshot_rows(draco, recipe, [chosen["verdict_event_id"]])["prompt"].tolist() == [prompt]

    params = lineage_params(draco_source, 3, PLANTED_LANE, draco_source.planted_item_id)
    at = open_page("draco_lineage", {**params, "verdict": chosen["verdict_event_id"]})
    assert_inert(at)
    assert prompt.strip() in [c.value.strip() for c in at.code]
    checks = [t.value for t in at.text if t.value.startswith("call 1 of 1 ·")]
    assert len(checks) == 1 and request["body_sha256"] in checks[0]
    assert "the rebuilt body matches the bytes sent" in checks[0]
    (shown,) = [j for j in at.json if '"body_sha256"' in j.value]
    assert json.loads(shown.value)["body"] == sent

    # an offline regime records no request, and says so
    at = open_page("draco_lineage", lineage_params(draco_source, 0, PLANTED_LANE, key[3]))
    assert "No LLM request recorded for this verdict" in " ".join(t.value for t in at.text)


def test_lineage_failed_research_shows_the_error_and_every_attempt(
    draco: Path, draco_source: DracoSnapshot
) -> None:
    failed_item = draco_source.failed_item_ids[0]
    at = open_page("draco_lineage", lineage_params(draco_source, 0, PLANTED_LANE, failed_item))
    assert "empty_output: no corpus document matches the problem" in [c.value for c in at.code]
    assert at.metric[0].value == "0.0"
    attempts = table_with(at, "research_failed_event_id")
    assert attempts["attempt"].tolist() == [2, 1]
    assert attempts["status"].tolist() == ["failed", "failed"]
    assert attempts["is_latest_attempt"].tolist() == [True, False]
    texts = [t.value for t in at.text]
    assert "No judge samples (the research never produced a report to judge)." in texts
    assert "No raw output for the scored attempt." in texts
    events = table_with(at, "content_sha256").set_index("stage")
    assert events.loc["research failed", "event_type"] == "research_failed"


def test_lineage_unknown_link_values_fall_back(draco: Path, draco_source: DracoSnapshot) -> None:
    at = open_page("draco_lineage", {"run": "' or 1=1 --", "judge": "x'); drop table x; --"})
    assert any("not in this snapshot" in w.value for w in at.warning)
    assert at.selectbox[0].value == draco_source.run_id
    assert not snapshot_rows(draco, "select * from marts.dim_runs").empty


def test_draco_data_functions_take_values_as_parameters(
    draco: Path, draco_source: DracoSnapshot
) -> None:
    hostile = "x' or '1'='1"
    assert data.draco_status().ready
    assert data.draco_leaderboard(hostile, hostile).empty
    assert data.draco_significance(hostile, hostile).empty
    assert data.draco_criterion_agreement(hostile, hostile, hostile).empty
    assert data.draco_item(hostile, hostile, hostile, hostile) is None
    assert data.draco_reports(hostile, hostile, hostile) == []
    assert data.draco_run_lanes(draco_source.run_id, draco_source.judge_ids[0]) == sorted(
        draco_source.lanes
    )
    assert re.fullmatch(r"[0-9a-f-]{36}", draco_source.run_id)
