"""Acceptance: a Valyu grading file imported reproduces its own published figures through our
dbt models, and its inference file re-judged by the offline judge gives a second regime shown
beside the imported one. Files are generated from the real DRACO test split (valyu_fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt_harness import NO_UNIT_TESTS, run_dbt
from valyu_fixture import valyu_grading, valyu_inference, write_json, write_jsonl

from collectors.draco.dataset import load_draco
from collectors.draco.normalize import NORMALIZER
from collectors.draco.offline_judge import OfflineJudge
from collectors.draco.runner import rejudge
from collectors.imports.draco_results import import_draco_results
from ingest.pipeline import ingest_log
from warehouse.log import EventLog

pytestmark = pytest.mark.slow  # the module fixture runs `dbt build`

DRACO_JSONL = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "draco" / "test.jsonl"
)
SYSTEM = "valyu_heavy"
IMPORTED_JUDGE = "imported:valyu:gemini/gemini-3-pro-preview"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    work = tmp_path_factory.mktemp("draco_import")
    task_set = load_draco(DRACO_JSONL)
    tasks = list(task_set.tasks)
    medicine = [t for t in tasks if t.domain == "Medicine"]
    others = sorted({t.domain for t in tasks} - {"Medicine"})
    graded = medicine + [t for d in others for t in [t for t in tasks if t.domain == d][:4]]
    errored = next(t for t in tasks if t not in graded)
    grading = valyu_grading(graded, runs=2, errored=errored, unmatched=False)
    grading_file = write_json(work / "valyu_heavy.eval.json", grading)
    inference_file = write_jsonl(
        work / "valyu_heavy.jsonl", valyu_inference(graded[:20], failed=graded[20])
    )
    log = EventLog(work / "log")
    (grading_run,) = import_draco_results(
        log, grading_file, fmt="valyu", system=SYSTEM, task_set=task_set
    )
    (inference_run,) = import_draco_results(
        log, inference_file, fmt="valyu", system=SYSTEM, task_set=task_set
    )
    rejudge(log, inference_run.run_id, OfflineJudge(samples=1), NORMALIZER)
    db = work / "warehouse.duckdb"
    result = ingest_log(log, db, work / "dlt")
    assert not result.quarantined, result.quarantine_samples
    run_dbt(
        [
            "build",
            *NO_UNIT_TESTS,
            "--select",
            "+draco_published_figures",
            "+fct_draco_imported_items",
            "+draco_regime_comparison",
            "+draco_leaderboard",
        ],
        db,
        work,
    )
    return {
        "db": db,
        "work": work,
        "grading": grading,
        "graded": graded,
        "errored": errored,
        "task_set": task_set,
        "grading_run": grading_run,
        "inference_run": inference_run,
        "log": log,
        "grading_file": grading_file,
        "inference_file": inference_file,
    }


def rows(db: Path, sql: str, params=()) -> list[dict]:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        cursor = con.execute(sql, list(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_published_overall_and_every_domain_reproduced_to_4_decimals(built):
    header = built["grading"]
    figures = rows(
        built["db"],
        "select * from marts.draco_published_figures where run_id = ?",
        [built["grading_run"].run_id],
    )
    expected = {
        ("overall", "all", "score"): header["overall_score"],
        ("overall", "all", "pass_rate"): header["overall_pass_rate"],
    }
    for domain, value in header["domain_scores"].items():
        expected[("domain", domain, "score")] = value
    for domain, value in header["domain_pass_rates"].items():
        expected[("domain", domain, "pass_rate")] = value
    assert len(header["domain_scores"]) == 10
    got = {(r["scope"], r["scope_value"], r["metric"]): r for r in figures}
    assert set(got) == set(expected)
    for key, published in expected.items():
        row = got[key]
        assert row["published_value"] == pytest.approx(published, abs=1e-12), key
        assert round(row["recomputed_value"], 4) == round(published, 4), key
        assert abs(row["recomputed_value"] - published) < 5e-5, key
        assert row["matches_4dp"], key
    # the overall counts the errored item at 0.0; its domain mean leaves it out (their rules)
    assert got[("overall", "all", "score")]["n_items"] == len(built["graded"]) + 1


def test_per_run_scores_are_averaged_not_the_verdicts(built):
    """Two judge runs per item: mean of the clamped run scores, as rubric_eval does. Averaging
    the verdicts first would differ on the Medicine tasks whose penalties push a run below 0."""
    items = {
        r["item_id"]: r
        for r in rows(
            built["db"],
            "select * from marts.fct_draco_imported_items where run_id = ?",
            [built["grading_run"].run_id],
        )
    }
    for result in built["grading"]["results"]:
        row = items[result["id"]]
        assert row["score"] == pytest.approx(result["normalized_score"], abs=1e-12)
        assert row["pass_rate"] == pytest.approx(result["pass_rate"], abs=1e-12)
        assert row["score_difference"] == pytest.approx(0.0, abs=1e-12)
    errored = items[built["errored"].item_id]
    assert errored["status"] == "failed" and errored["score"] == 0.0
    clamped = [
        r
        for r in built["grading"]["results"]
        if r.get("runs") and any(run["raw_score"] < 0 for run in r["runs"])
    ]
    assert clamped, "fixture should exercise the clamp on a negative run"


def test_leaderboard_shows_published_beside_ours_and_reports_unmatched(built):
    (row,) = rows(
        built["db"],
        "select * from marts.draco_imported_leaderboard where run_id = ?",
        [built["grading_run"].run_id],
    )
    header = built["grading"]
    assert row["judge_id"] == IMPORTED_JUDGE
    assert row["judge_model"] == header["judge_model"]
    assert row["judge_label"] == "imported, not judged here"
    assert row["file_name"] == "valyu_heavy.eval.json"
    assert row["file_sha256"] == built["grading_run"].file_sha256
    assert row["published_score"] == pytest.approx(header["overall_score"])
    assert abs(row["score_difference"]) < 5e-5
    assert abs(row["pass_rate_difference"]) < 5e-5
    assert row["published_latency_mean_s"] == pytest.approx(header["avg_latency_s"])
    assert row["n_unmatched"] == 0
    graded_ids = {t.item_id for t in built["graded"]} | {built["errored"].item_id}
    assert row["n_absent"] == 100 - len(graded_ids)
    assert set(row["absent_ids"]) == {
        t.item_id for t in built["task_set"].tasks if t.item_id not in graded_ids
    }
    # our rule counts every dataset task; the file's own denominator is its items
    assert row["score_mean_all_tasks"] < row["score_mean"]


def test_imported_verdicts_never_enter_our_regimes(built):
    ours = rows(built["db"], "select distinct judge_id from marts.draco_leaderboard")
    assert IMPORTED_JUDGE not in {r["judge_id"] for r in ours}
    assert (
        rows(
            built["db"],
            "select * from marts.draco_leaderboard where run_id = ?",
            [built["grading_run"].run_id],
        )
        == []
    )


def test_rejudged_inference_is_a_second_regime_side_by_side(built):
    comparison = rows(built["db"], "select * from marts.draco_regime_comparison")
    assert len(comparison) == 1
    (row,) = comparison
    assert row["imported_judge_id"] == IMPORTED_JUDGE
    assert row["our_run_id"] == built["inference_run"].run_id
    assert row["our_judge_id"].startswith("offline")
    assert row["our_judge_official"] is False
    assert row["our_n_items"] == 100  # every task: 20 reported, the rest failed at 0.0
    assert row["our_n_scored"] == 20
    assert row["score_difference"] == pytest.approx(
        row["our_score_mean"] - row["imported_score_mean"]
    )
    failed = rows(
        built["db"],
        "select error_class, count(*) as n from intermediate.int_draco_items_scored "
        "where run_id = ? group by error_class order by error_class",
        [built["inference_run"].run_id],
    )
    assert {r["error_class"]: r["n"] for r in failed} == {
        "imported_error": 1,
        "missing_in_import": 79,
        None: 20,
    }


def test_importing_the_same_file_again_is_a_no_op(built):
    before = sum(1 for _ in built["log"].read())
    (again,) = import_draco_results(
        built["log"],
        built["grading_file"],
        fmt="valyu",
        system=SYSTEM,
        task_set=built["task_set"],
    )
    assert again.already_imported and again.run_id == built["grading_run"].run_id
    assert sum(1 for _ in built["log"].read()) == before


def test_imported_report_cost_reaches_the_items_marked_imported(built):
    """An inference file's per-task cost (valyu `meta.cost`) is the research's cost, in the
    same column as our runs' (int_draco_items_scored.cost_usd, which fct_draco_items and the
    leaderboard's cost_mean_usd read), with basis `imported`: the file said so, nobody billed us
    (it was `billed` before). A task the file has no report for costs nothing known."""
    records = [json.loads(line) for line in Path(built["inference_file"]).read_text().splitlines()]
    stated = [r["meta"]["cost"] for r in records if r.get("output") and not r.get("error")]
    assert len(stated) == 20
    research = [
        event["payload"]
        for _, event in built["log"].read()
        if event["event_type"] == "research_completed"
        and event["run_id"] == built["inference_run"].run_id
    ]
    assert sorted(r["cost_usd"] for r in research) == sorted(stated)
    assert {r["cost_basis"] for r in research} == {"imported"}
    costs = rows(
        built["db"],
        "select research_state, cost_usd, cost_basis, count(*) as n "
        "from intermediate.int_draco_items_scored where run_id = ? "
        "group by all order by n",
        [built["inference_run"].run_id],
    )
    reported = [r for r in costs if r["cost_usd"] is not None]
    assert [(r["cost_usd"], r["cost_basis"], r["n"]) for r in reported] == [
        (stated[0], "imported", len(stated))
    ]
    assert sum(r["n"] for r in costs if r["cost_usd"] is None) == 80
    (board,) = rows(
        built["db"],
        "select cost_mean_usd, cost_total_usd, n_items_costed, cost_basis "
        "from marts.draco_leaderboard where run_id = ?",
        [built["inference_run"].run_id],
    )
    assert board["cost_mean_usd"] == pytest.approx(sum(stated) / len(stated))
    assert board["cost_total_usd"] == pytest.approx(sum(stated))
    assert (board["n_items_costed"], board["cost_basis"]) == (len(stated), "imported")


def test_imported_item_latency_reproduces_the_published_average(built):
    """The grading file's per-task `elapsed` is fct_draco_imported_items.latency_s, so the file's
    own `avg_latency_s` can be checked against the marts."""
    (row,) = rows(
        built["db"],
        "select avg(latency_s) as mean, count(latency_s) as n from marts.fct_draco_imported_items "
        "where run_id = ?",
        [built["grading_run"].run_id],
    )
    assert row["n"] == len(built["graded"])  # the errored item has no latency
    assert row["mean"] == pytest.approx(built["grading"]["avg_latency_s"])
