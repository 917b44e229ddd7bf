"""raw.events -> `dbt build` -> marts, compared with the independent oracle.

Inputs: hand-made edge cases (tests/dbt/extraction_cases.py), an import run, a run of another
benchmark, and the 181 real article-extraction-benchmark pages fed through three synthetic
systems (the ground truth itself, a degraded copy, a padded copy)."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
from dbt_harness import REPO
from extraction_cases import load_ground_truth
from extraction_expected import (
    DEFAULT_VARS,
    close,
    expected_bootstrap,
    expected_leaderboard,
    expected_pages,
)
from fixture_warehouse import warned_tests
from raw_events_fixture import RAW_EVENTS_DDL

pytestmark = pytest.mark.slow

CONTRACT = REPO / "docs" / "warehouse-contract.md"
PAGE_SCORE_COLUMNS = [
    "truth_tokens",
    "output_tokens",
    "tp",
    "fp",
    "fn",
    "page_precision",
    "page_recall",
    "page_f1",
    "exact_match",
    "anchors_total",
    "anchors_found",
    "completeness",
    "token_recall",
    "window_precision",
    "token_f1",
    "raw_success",
    "non_content",
    "useful_success",
]


@pytest.fixture(scope="module")
def pages():
    return expected_pages()


@pytest.fixture(scope="module")
def fct(built_warehouse):
    rows = built_warehouse.rows("select * from marts.fct_extraction_pages")
    return {(row["run_id"], row["system"], row["item_id"]): row for row in rows}


@pytest.fixture(scope="module")
def leaderboard(built_warehouse):
    rows = built_warehouse.rows("select * from marts.extraction_leaderboard")
    return {(row["run_id"], row["system"]): row for row in rows}


def test_build_passes_and_warns_about_the_orphan(built_warehouse):
    out = built_warehouse.build_output
    summary = re.search(r"Done\. PASS=(\d+) WARN=(\d+) ERROR=(\d+) SKIP=(\d+)", out)
    assert summary, out[-2000:]
    passed, warned, errored, skipped = map(int, summary.groups())
    assert (warned, errored, skipped) == (1, 0, 0) and passed > 100
    assert re.search(
        r"WARN 1 assert_extraction_outcomes_are_on_the_grid", re.sub(r"\x1b\[[0-9;]*m", "", out)
    )
    assert warned_tests(out) == ["assert_extraction_outcomes_are_on_the_grid"]
    # a user's build: the unit tests run through `bench test` (tests/cli/test_bench_test_cmd.py)
    assert "START unit_test " not in out


def test_raw_events_fixture_matches_the_contract_table():
    text = CONTRACT.read_text()
    section = text.split("`raw.events`")[1].split("`raw.quarantined_events`")[0]
    contract = re.findall(r"^\| (\w+) \| (\w+) \|", section, re.M)
    fixture = re.findall(r"^\s+(\w+) (\w+),?$", RAW_EVENTS_DDL, re.M)
    assert [(name, kind) for name, kind in contract if name != "column"] == fixture


def test_every_grid_page_is_present_once(built_warehouse, fct, pages):
    expected_keys = {(built_warehouse.run_ids[p.run], p.system, p.item_id) for p in pages}
    assert set(fct) == expected_keys
    assert len(fct) == len(pages) == 4 * 8 + 8 + 3 * 181


def test_attempt_resolution_and_missing_pairs(built_warehouse, fct, pages):
    for page in pages:
        row = fct[(built_warehouse.run_ids[page.run], page.system, page.item_id)]
        assert row["outcome"] == page.outcome, (page.system, page.item_id)
        assert row["attempt"] == page.attempt, (page.system, page.item_id)
        assert row["output_text"] == (page.output if page.outcome == "completed" else None)
        assert row["output_bytes"] == page.output_bytes
        if page.outcome == "missing":
            assert row["extraction_event_id"] is None and row["latency_ms"] is None
        else:
            assert row["extraction_event_id"] is not None


def test_page_scores_equal_the_oracle(built_warehouse, fct, pages):
    mismatches = []
    for page in pages:
        row = fct[(built_warehouse.run_ids[page.run], page.system, page.item_id)]
        for column in PAGE_SCORE_COLUMNS:
            if not close(row[column], page.scores[column]):
                mismatches.append(
                    (page.run, page.system, page.item_id, column, row[column], page.scores[column])
                )
    assert mismatches == []


def test_sql_token_counts_equal_python_on_the_real_corpus(built_warehouse):
    truth = load_ground_truth()
    rows = built_warehouse.rows(
        "select item_id, truth_tokens from marts.fct_extraction_pages where run_id = ? and system = 'truth'",
        [built_warehouse.run_ids["article-extraction-benchmark"]],
    )
    assert len(rows) == 181
    for row in rows:
        assert row["truth_tokens"] == len(
            re.findall(r"\w+", truth[row["item_id"]]["articleBody"])
        ), row["item_id"]


def test_real_corpus_sanity(built_warehouse, leaderboard):
    run_id = built_warehouse.run_ids["article-extraction-benchmark"]
    truth = leaderboard[(run_id, "truth")]
    for column in (
        "shingle_precision",
        "shingle_recall",
        "shingle_f1",
        "shingle_accuracy",
        "completeness",
        "useful_success_rate",
        "token_f1",
    ):
        assert truth[column] == pytest.approx(1.0), column
    degraded, padded = leaderboard[(run_id, "degraded")], leaderboard[(run_id, "padded")]
    assert degraded["shingle_f1"] < padded["shingle_f1"] < 1.0
    assert padded["shingle_recall"] == pytest.approx(1.0) and padded["shingle_accuracy"] == 0.0
    assert 0 < degraded["completeness"] < 1


def test_leaderboard_equals_the_oracle(built_warehouse, leaderboard, pages):
    expected = expected_leaderboard(pages)
    assert set(leaderboard) == {(built_warehouse.run_ids[run], system) for run, system in expected}
    mismatches = []
    for (run, system), want in expected.items():
        row = leaderboard[(built_warehouse.run_ids[run], system)]
        for column, value in want.items():
            ok = (
                row[column] == value
                if isinstance(value, str | int) and not isinstance(value, bool)
                else close(row[column], value)
            )
            if not ok:
                mismatches.append((run, system, column, row[column], value))
        weights = DEFAULT_VARS["extraction_weights"]
        assert (
            row["w_completeness"],
            row["w_success"],
            row["w_f1"],
            row["w_latency"],
            row["w_throughput"],
        ) == (
            weights["completeness"],
            weights["success"],
            weights["f1"],
            weights["latency"],
            weights["throughput"],
        )
        assert row["useful_success_threshold"] == DEFAULT_VARS["useful_success_threshold"]
    assert mismatches == []


def test_imports_have_no_latency_and_lose_only_the_latency_term(built_warehouse, leaderboard):
    row = leaderboard[(built_warehouse.run_ids["imported"], "ext-import")]
    assert row["run_source"] == "import"
    assert row["latency_p95_s"] is None and row["latency_score"] is None
    weights = DEFAULT_VARS["extraction_weights"]
    without_latency = (
        weights["completeness"] * row["completeness"]
        + weights["success"] * row["useful_success_rate"]
        + weights["f1"] * row["token_f1"]
        + weights["throughput"] * row["throughput_score"]
    )
    assert row["composite"] == pytest.approx(without_latency)


def test_bootstrap_std_equals_the_oracle(built_warehouse, leaderboard, pages):
    groups = defaultdict(list)
    for page in pages:
        groups[(page.run, page.system)].append(page)
    for (run, system), group in groups.items():
        run_id = built_warehouse.run_ids[run]
        row = leaderboard[(run_id, system)]
        assert (row["bootstrap_seed"], row["bootstrap_samples"]) == (20261130, 1000)
        want = expected_bootstrap(group, run_id, system, seed=20261130, samples=1000)
        for metric, value in want.items():
            assert close(row[f"shingle_{metric}_std"], value, tol=1e-9), (run, system, metric)


def test_lineage_points_at_real_events(built_warehouse, fct, leaderboard):
    events = {
        row["event_id"]: row
        for row in built_warehouse.rows(
            "select event_id, event_type, content_sha256 from marts.dim_events"
        )
    }
    by_pair = defaultdict(list)
    for (run_id, system, _), row in fct.items():
        assert events[row["item_event_id"]]["event_type"] == "item_registered"
        if row["extraction_event_id"] is not None:
            event = events[row["extraction_event_id"]]
            assert event["event_type"] in ("extraction_completed", "extraction_failed")
            assert event["content_sha256"] == row["extraction_content_sha256"]
            by_pair[(run_id, system)].append(row["extraction_event_id"])
    for key, row in leaderboard.items():
        assert list(row["event_ids"]) == sorted(by_pair[key]), key


def test_dim_events_is_deduplicated(built_warehouse):
    raw, distinct, dim = built_warehouse.query(
        "select (select count(*) from raw.events), (select count(distinct event_id) from raw.events), "
        "(select count(*) from marts.dim_events)"
    ).iloc[0]
    assert raw > distinct == dim


def test_dim_runs(built_warehouse, fixture_warehouse):
    runs = {row["run_id"]: row for row in built_warehouse.rows("select * from marts.dim_runs")}
    ids = built_warehouse.run_ids
    # one row per run of the fixture warehouse: these extraction runs and the QA and DRACO ones
    assert set(runs) == fixture_warehouse.all_run_ids
    assert set(ids.values()) <= set(runs)
    assert runs[ids["edge"]]["status"] == "finished"
    assert runs[ids["article-extraction-benchmark"]]["status"] == "finished"
    assert runs[ids["imported"]]["status"] == "in_progress"
    assert runs[ids["simpleqa-smoke"]]["benchmark"] == "simpleqa"
    edge = runs[ids["edge"]]
    assert (edge["n_items_registered"], edge["n_completed"], edge["n_failed"]) == (
        8,
        16,
        1,
    )  # resolved outcomes, the orphan included
    assert edge["run_started_event_id"] is not None and edge["git_sha"] == "0" * 40


def test_other_benchmarks_stay_out_of_extraction_marts(built_warehouse):
    run_id = built_warehouse.run_ids["simpleqa-smoke"]
    assert (
        built_warehouse.query(
            "select count(*) n from marts.extraction_leaderboard where run_id = ?", [run_id]
        ).n[0]
        == 0
    )


def test_dim_scoring_vars_records_the_defaults(built_warehouse):
    import json

    rows = {
        row["var_name"]: json.loads(row["var_value"])
        for row in built_warehouse.rows(
            "select var_name, var_value::varchar as var_value from marts.dim_scoring_vars"
        )
    }
    assert {name: rows[name] for name in DEFAULT_VARS} == DEFAULT_VARS
    # the QA family's vars are recorded beside them (their defaults are checked in tests/dbt_qa)
    assert {
        "qa_baseline_lane",
        "umbrela_threshold",
        "qa_correction",
        "lane_price_overrides",
    } <= set(rows)
