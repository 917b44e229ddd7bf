"""The DRACO marts built from events (draco_fixture.py) by `dbt build`: the real dataset's
dimensions, the grid (never drops an item), the resolution rules on the crafted cases, lineage
and the published contract."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from draco_fixture import (
    FAILED_ITEM,
    INCOMPLETE_ITEM,
    J1,
    J2,
    J2_UNJUDGED_ITEM,
    LANES,
    RETRIED_ITEM,
    TASK_ROWS,
    UNREPORTED_ITEM,
)
from fixture_warehouse import warned_tests
from mart_contract import contract_mismatches

pytestmark = pytest.mark.slow

DRACO_SHA256 = "e35bfe78cd827fa1d541b79fbc7bc7b91966d3227d8742c83e99d26d4ac4679a"
DRACO_MARTS = (
    "dim_rubric_tasks",
    "dim_rubric_criteria",
    "fct_draco_items",
    "fct_draco_item_axes",
    "fct_draco_criteria",
    "fct_draco_domains",
    "draco_leaderboard",
    "fct_draco_significance",
    "fct_draco_criterion_agreement",
)


def item(wh, lane, index, judge=J1, fixture=None):
    return wh.rows(
        "select * from marts.fct_draco_items where run_id = ? and lane = ? and item_id = ? "
        "and judge_id = ?",
        [wh.run_ids["scored"], lane, fixture.tasks[index].item_id, judge],
    )[0]


def test_build_passes_without_draco_warnings(draco_warehouse):
    summary = re.search(
        r"Done\. PASS=(\d+) WARN=(\d+) ERROR=(\d+) SKIP=(\d+)", draco_warehouse.build_output
    )
    assert summary, draco_warehouse.build_output[-2000:]
    # the one warning of the shared build is the extraction fixture's deliberate orphan output
    assert summary.groups()[1:] == ("1", "0", "0")
    assert warned_tests(draco_warehouse.build_output) == [
        "assert_extraction_outcomes_are_on_the_grid"
    ]
    # its rules' unit tests (draco_item_score_clamps_at_0_and_1_flat_list_and_status, ...) run
    # through `bench test`: tests/cli/test_bench_test_cmd.py


def test_real_dataset_dimensions_match_the_published_counts(draco_warehouse):
    tasks = draco_warehouse.rows(
        "select * from marts.dim_rubric_tasks where dataset_sha256 = ?", [DRACO_SHA256]
    )
    assert len(tasks) == 100
    assert sum(t["n_criteria"] for t in tasks) == 3934
    assert all(t["n_criteria"] == t["criteria_count"] for t in tasks)
    assert sum(t["n_negative"] for t in tasks) == 415
    assert all(t["n_negative"] >= 1 and t["n_axes"] == 4 for t in tasks)
    assert Counter(t["domain"] for t in tasks) == {
        "Finance": 20,
        "Shopping/Product Comparison": 16,
        "Academic": 12,
        "Technology": 10,
        "General Knowledge": 9,
        "UX Design": 9,
        "Law": 6,
        "Medicine": 6,
        "Personalized Assistant": 6,
        "Needle in a Haystack": 6,
    }
    assert min(t["positive_weight"] for t in tasks) == 108
    assert max(t["positive_weight"] for t in tasks) == 618
    assert min(t["negative_weight"] for t in tasks) == -1040
    # a task registered by both runs is one row listing both registrations
    assert Counter(t["n_runs"] for t in tasks) == {1: 100 - len(TASK_ROWS), 2: len(TASK_ROWS)}
    by_id = {t["item_id"]: t for t in tasks}
    academic = by_id["0c2c668a-c3bf-41af-93c9-b5614ff63508"]
    assert (academic["n_criteria"], academic["positive_weight"], academic["negative_weight"]) == (
        53,
        401,
        -55,
    )
    finance = by_id["f0bed5aa-f7c4-4013-8d0c-10ffebeaf300"]
    assert (finance["n_criteria"], finance["positive_weight"]) == (49, 406)
    needle = next(t for t in tasks if t["item_id"].startswith("ca0edd2d-"))
    assert (needle["n_criteria"], needle["positive_weight"]) == (27, 147)

    axes = draco_warehouse.rows(
        "select axis, count(*) as n, count(*) filter (where registered_weight < 0) as neg "
        "from marts.dim_rubric_criteria where dataset_sha256 = ? group by axis",
        [DRACO_SHA256],
    )
    assert {a["axis"]: (a["n"], a["neg"]) for a in axes} == {
        "factual-accuracy": (2048, 40),
        "breadth-and-depth-of-analysis": (855, 108),
        "presentation-quality": (556, 178),
        "citation-quality": (475, 89),
    }
    per_axis = draco_warehouse.rows(
        "select axis, count(*) as n from marts.dim_rubric_criteria "
        "where dataset_sha256 = ? and item_id = ? group by axis",
        [DRACO_SHA256, academic["item_id"]],
    )
    assert {a["axis"]: a["n"] for a in per_axis} == {
        "factual-accuracy": 31,
        "breadth-and-depth-of-analysis": 9,
        "presentation-quality": 5,
        "citation-quality": 8,
    }
    weights = draco_warehouse.rows(
        "select registered_weight as w, count(*) as n from marts.dim_rubric_criteria "
        "where dataset_sha256 = ? and registered_weight < -25 group by all",
        [DRACO_SHA256],
    )
    assert {r["w"]: r["n"] for r in weights} == {
        -500: 1,
        -300: 1,
        -200: 2,
        -150: 3,
        -100: 4,
        -75: 1,
        -60: 1,
        -50: 6,
        -30: 3,
    }


def test_grid_is_every_task_x_lane_x_judge_regime(draco_warehouse, draco_fixture):
    rows = draco_warehouse.rows("select lane, judge_id, item_id from marts.fct_draco_items")
    assert len(rows) == len(TASK_ROWS) * len(LANES) * 2
    assert {r["judge_id"] for r in rows} == {J1, J2}
    # the registration-only run has no lanes and no judge: no item rows, only dimensions
    assert not draco_warehouse.rows(
        "select * from marts.fct_draco_items where run_id = ?",
        [draco_warehouse.run_ids["registration"]],
    )
    criteria = draco_warehouse.rows("select count(*) as n from marts.fct_draco_criteria")[0]["n"]
    assert criteria == sum(len(t.criteria) for t in draco_fixture.tasks) * len(LANES) * 2


def test_failed_item_scores_zero_everywhere_with_its_error(draco_warehouse, draco_fixture):
    row = item(draco_warehouse, FAILED_ITEM[0], FAILED_ITEM[1], fixture=draco_fixture)
    assert row["status"] == "failed" and row["research_state"] == "failed"
    assert row["error_class"] == "vendor_failed" and row["attempt"] == 2
    assert row["score"] == 0.0 and row["pass_rate"] == 0.0
    assert [
        row[f"score_{a}"]
        for a in (
            "factual_accuracy",
            "breadth_and_depth_of_analysis",
            "presentation_quality",
            "citation_quality",
        )
    ] == [0.0] * 4
    assert row["cost_usd"] is None and row["cost_basis"] is None
    assert row["research_failed_event_id"] is not None and row["research_event_id"] is None


def test_retried_research_scores_the_latest_successful_attempt(draco_warehouse, draco_fixture):
    row = item(draco_warehouse, RETRIED_ITEM[0], RETRIED_ITEM[1], fixture=draco_fixture)
    assert row["status"] == "scored" and row["attempt"] == 2
    assert row["research_failed_event_id"] is not None  # the failed attempt stays as evidence
    assert row["cost_usd"] == 2.5 and row["cost_basis"] == "list_price"


def test_incomplete_items_are_flagged_and_counted_apart(draco_warehouse, draco_fixture):
    partial = item(draco_warehouse, INCOMPLETE_ITEM[0], INCOMPLETE_ITEM[1], fixture=draco_fixture)
    assert partial["status"] == "incomplete" and partial["research_state"] == "reported"
    assert partial["n_criteria_judged"] == partial["n_criteria"] - 2
    assert partial["n_samples"] < partial["n_samples_expected"]
    # a lower bound: P is the positive mass of ALL the task's criteria, judged or not
    task = draco_fixture.tasks[INCOMPLETE_ITEM[1]]
    assert partial["positive_weight"] == sum(c.weight for c in task.criteria if c.weight > 0)
    unreported = item(
        draco_warehouse, UNREPORTED_ITEM[0], UNREPORTED_ITEM[1], fixture=draco_fixture
    )
    assert unreported["status"] == "incomplete" and unreported["research_state"] == "unreported"
    assert unreported["score"] == 0.0 and unreported["report_event_id"] is None
    assert unreported["cost_basis"] == "billed"
    not_rejudged = item(
        draco_warehouse, J2_UNJUDGED_ITEM[0], J2_UNJUDGED_ITEM[1], judge=J2, fixture=draco_fixture
    )
    assert not_rejudged["status"] == "incomplete" and not_rejudged["n_samples"] == 0
    assert (
        item(draco_warehouse, J2_UNJUDGED_ITEM[0], J2_UNJUDGED_ITEM[1], fixture=draco_fixture)[
            "status"
        ]
        == "scored"
    )
    board = {
        (r["lane"], r["judge_id"]): r
        for r in draco_warehouse.rows("select * from marts.draco_leaderboard")
    }
    assert board[(INCOMPLETE_ITEM[0], J1)]["n_incomplete"] == 2
    assert board[(FAILED_ITEM[0], J1)]["n_failed"] == 1
    assert board[(J2_UNJUDGED_ITEM[0], J2)]["n_incomplete"] == 1


def test_retried_judge_samples_keep_the_highest_judge_attempt(draco_warehouse):
    rows = draco_warehouse.rows(
        "select * from intermediate.int_draco_verdicts_resolved where n_judge_attempts > 1"
    )
    assert rows and all(r["judge_attempt"] == 2 for r in rows)
    flagged = draco_warehouse.rows(
        "select polarity, outcome, met from intermediate.int_draco_verdicts_resolved where flagged"
    )
    # least favourable: UNMET on positive, MET on negative, both outcomes on both polarities
    assert {(r["polarity"], r["outcome"]) for r in flagged} == {
        ("positive", "unparsed"),
        ("positive", "failed"),
        ("negative", "unparsed"),
        ("negative", "failed"),
    }
    assert all(r["met"] == (r["polarity"] == "negative") for r in flagged)


def test_leaderboard_carries_regime_cost_basis_and_lineage(draco_warehouse):
    board = draco_warehouse.rows("select * from marts.draco_leaderboard")
    assert len(board) == len(LANES) * 2
    by = {(r["lane"], r["judge_id"]): r for r in board}
    assert by[("exa_deep_reasoning", J1)]["cost_basis"] == "billed"
    assert by[("valyu_heavy", J1)]["cost_basis"] == "list_price"
    assert by[("valyu_heavy", J1)]["cost_mean_usd"] == pytest.approx(2.5)
    assert by[("parallel_task_ultra8x", J1)]["cost_mean_usd"] == pytest.approx(2.4)
    assert by[("valyu_heavy", J1)]["judge_model"] == "claude-test"
    assert by[("valyu_heavy", J2)]["judge_model"] == "gemini-test"
    assert (
        by[("valyu_heavy", J2)]["judge_samples"] == 1
        and by[("valyu_heavy", J2)]["judge_official"] is False
    )
    assert all(
        r["judge_prompt_sha256"] and r["regime_event_id"] and r["run_started_event_id"]
        for r in board
    )
    assert all(r["pass_threshold"] == 0.5 and r["penalty_floor"] is None for r in board)
    ids = {i for r in board for i in r["event_ids"]}
    known = {
        r["event_id"]: r["event_type"]
        for r in draco_warehouse.rows("select event_id, event_type from marts.dim_events")
    }
    assert ids <= set(known)
    assert {known[i] for i in ids} == {"research_completed", "report_normalized", "research_failed"}
    verdict_ids = draco_warehouse.rows(
        "select unnest(verdict_event_ids) as id from marts.fct_draco_criteria limit 500"
    )
    assert {known[r["id"]] for r in verdict_ids} == {"judge_verdict"}


def test_dim_runs_counts_research_outcomes(draco_warehouse):
    runs = {r["run_id"]: r for r in draco_warehouse.rows("select * from marts.dim_runs")}
    scored = runs[draco_warehouse.run_ids["scored"]]
    assert scored["benchmark"] == "draco"
    assert scored["n_items_registered"] == len(TASK_ROWS)
    assert (scored["n_completed"], scored["n_failed"]) == (len(TASK_ROWS) * len(LANES) - 1, 1)
    assert runs[draco_warehouse.run_ids["registration"]]["n_items_registered"] == 100


def test_scoring_vars_are_recorded(draco_warehouse):
    recorded = {
        r["var_name"]: r["var_value"]
        for r in draco_warehouse.rows("select * from marts.dim_scoring_vars")
    }
    assert recorded["draco_penalty_floor"] == "null"
    assert recorded["draco_pass_threshold"] == "0.5"
    assert recorded["draco_correction"] == '"holm"'
    assert recorded["draco_bootstrap_seed"] == "20261130"


def test_draco_marts_are_built_to_their_contract(draco_warehouse):
    """With DRACO rows in them (the Python significance mart's types come from its rows' schema,
    which dbt does not check)."""
    assert contract_mismatches(draco_warehouse.path, set(DRACO_MARTS)) == {}
