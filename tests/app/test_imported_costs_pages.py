"""Imported latency and cost in the app (issue #30): the QA leaderboard of an imported run and its
imported rows beside our lanes, the imported DRACO leaderboard's mean cost and the QA files' own
header figures on the Imported results page.

Built once on top of the imports snapshot (tests/app/fixture_imports_snapshot.py): its home is
copied, three files are imported through the real `bench import` and the marts are refreshed
once (dlt ingest -> dbt build -> publish):

* a per-row SimpleQA JSONL in the common shape on the series' questions, with latency in seconds
  and a cost per row (one row states none);
* a simple-evals file on the same questions (no latency, no cost), whose lane is one the
  lane_prices seed lists: the mart falls back to that list price, the app must not show it;
* a DRACO long CSV by criterion id with a per-task cost (two tasks state one, one does not).

Expected figures are recounted from the files written here; the marts are read with plain
DuckDB only to show the list-price fallback the app hides.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
import statistics
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from app_harness import APP_SCRIPT, TIMEOUT_S, snapshot_rows
from fixture_imports_snapshot import SHARED, SYSTEM, ImportsSnapshot, bench, imports_snapshot
from streamlit.testing.v1 import AppTest

from collectors.draco.dataset import load_draco
from tests.shared_build import built_once
from transform.pipeline import refresh
from warehouse.metric_scales import MISSING
from warehouse.paths import BenchPaths

pytestmark = pytest.mark.slow  # a copy of the imports snapshot, three real imports, one refresh

REPO = Path(__file__).resolve().parents[2]
DRACO_EXAMPLE = REPO / "docs" / "examples" / "draco_verdicts_by_id.csv"
COSTED_LANE = "their_costed_harness"
COSTED_GRADER = "their-grader"
COSTED_MAP = "question=problem,answer=predicted,grade=grade,latency_s=latency,cost_usd=cost"
LISTED_LANE = "nimble_search"  # a lane the lane_prices seed lists (basis list)
DRACO_SYSTEM = "their_costed_system"
N_QUESTIONS = 9


@dataclass(frozen=True)
class CostSnapshot:
    serve_db: Path
    costed_file: Path
    simple_evals_file: Path
    draco_costs: dict[str, float | None]
    series_run: str


def _costed_jsonl(questions: list[dict[str, str]], path: Path) -> Path:
    """The common shape: grade letters, latency in seconds, a cost per row (the third row states
    none: null)."""
    with path.open("w", encoding="utf-8") as handle:
        for i, row in enumerate(questions):
            correct = i % 3 != 0
            record = {
                "problem": row["question"],
                "answer": row["gold_answer"],
                "predicted": row["gold_answer"] if correct else "something else",
                "grade": "A" if correct else ("B" if i % 2 else "C"),
                "latency": 0.8 + 0.35 * i,
                "cost": None if i == 2 else round(0.0021 * (i + 1), 6),
            }
            handle.write(json.dumps(record) + "\n")
    return path


def _answer_aggregates(grades: list[str]) -> dict[str, float]:
    """simple-evals' SimpleQA aggregates, written plainly."""
    n = len(grades)
    correct, incorrect = grades.count("A") / n, grades.count("B") / n
    given = correct / (correct + incorrect) if correct + incorrect else 0.0
    f1 = 2 * given * correct / (given + correct) if given + correct else 0.0
    return {
        "is_correct": correct,
        "is_incorrect": incorrect,
        "is_not_attempted": grades.count("C") / n,
        "accuracy_given_attempted": given,
        "f1": f1,
    }


def _simple_evals(questions: list[dict[str, str]], path: Path) -> Path:
    """An `<eval>_allresults.json` with per-row grades; its header's f1 is off in the 3rd
    decimal (the page must say NO for that one figure only)."""
    grades = ["A" if i % 2 == 0 else ("B" if i % 4 == 1 else "C") for i in range(len(questions))]
    metrics = _answer_aggregates(grades)
    published = {**metrics, "f1": metrics["f1"] + 0.002}
    document = {
        "score": metrics["is_correct"],
        "metrics": published,
        "convos": [
            [
                {"role": "user", "content": row["question"]},
                {
                    "role": "assistant",
                    "content": row["gold_answer"] if grade == "A" else "not sure",
                },
            ]
            for row, grade in zip(questions, grades, strict=True)
        ],
        "metadata": {"example_level_metadata": [{"grade": grade} for grade in grades]},
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _draco_csv(path: Path) -> dict[str, float | None]:
    """docs/examples/draco_verdicts_by_id.csv (one task) plus two tasks by criterion id, with a
    `cost_usd` column: the example's task 0.42 (first row only), the next 0.25, the last none."""
    rows = list(csv.DictReader(DRACO_EXAMPLE.open(newline="", encoding="utf-8")))
    costs: dict[str, float | None] = {rows[0]["task_id"]: 0.42}
    out_rows = [{**row, "cost_usd": "0.42" if i == 0 else ""} for i, row in enumerate(rows)]
    tasks = load_draco(SHARED / "draco" / "test.jsonl").tasks
    for task, cost in zip(
        [t for t in tasks if t.item_id not in costs][:2], (0.25, None), strict=True
    ):
        costs[task.item_id] = cost
        out_rows += [
            {
                "task_id": task.item_id,
                "criterion_id": criterion.criterion_id,
                "verdict": "MET" if position % 2 else "UNMET",
                "justification": "",
                "cost_usd": "" if cost is None else str(cost),
            }
            for position, criterion in enumerate(task.criteria)
        ]
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, [*rows[0], "cost_usd"])
        writer.writeheader()
        writer.writerows(out_rows)
    return costs


def _build(base: ImportsSnapshot, root: Path) -> CostSnapshot:
    home = root / "home"
    shutil.copytree(base.home, home)
    work = home / "cost-files"
    work.mkdir()
    question_file = home / "files" / "verticals.csv"  # the series' questions
    with question_file.open(newline="", encoding="utf-8") as handle:
        questions = list(csv.DictReader(handle))[:N_QUESTIONS]
    costed = _costed_jsonl(questions, work / "their_results.jsonl")
    simple_evals = _simple_evals(questions, work / "simpleqa_allresults.json")
    draco_file = work / "their_draco.csv"
    draco_costs = _draco_csv(draco_file)
    qa = ["import", "qa-results", "--questions", str(question_file), "--no-score"]
    bench(home, *qa, str(costed), "--format", "jsonl", "--lane", COSTED_LANE,
          "--grader-label", COSTED_GRADER, "--map", COSTED_MAP)  # fmt: skip
    bench(home, *qa, str(simple_evals), "--format", "simple-evals", "--lane", LISTED_LANE,
          "--grader-label", "their-other-grader")  # fmt: skip
    bench(home, "import", "draco-results", str(draco_file), "--format", "csv",
          "--system", DRACO_SYSTEM, "--judge-label", "their-judge", "--no-score")  # fmt: skip
    paths = BenchPaths(home)
    refresh(paths)
    (series_run,) = snapshot_rows(
        paths.serve_db,
        "select run_id from marts.qa_leaderboard where series is not null "
        "group by run_id order by max(run_index) desc limit 1",
    )["run_id"]
    return CostSnapshot(paths.serve_db, costed, simple_evals, draco_costs, series_run)


@pytest.fixture(scope="session")
def cost_source(tmp_path_factory: pytest.TempPathFactory) -> CostSnapshot:
    base = imports_snapshot(tmp_path_factory)
    return built_once(tmp_path_factory, "imported-costs-home", lambda root: _build(base, root))


@pytest.fixture
def snap(bench_home: Path, cost_source: CostSnapshot) -> CostSnapshot:
    target = bench_home / "serve.duckdb"
    shutil.copyfile(cost_source.serve_db, target)
    return CostSnapshot(
        target,
        cost_source.costed_file,
        cost_source.simple_evals_file,
        cost_source.draco_costs,
        cost_source.series_run,
    )


def open_page(page: str, query_params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page(f"app_pages/{page}.py")
    at.query_params.update(query_params or {})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def import_side(db: Path, lane: str) -> tuple[str, str]:
    ((run_id, grader_id),) = snapshot_rows(
        db,
        "select distinct run_id, grader_id from marts.qa_leaderboard where lane = ?",
        [lane],
    ).itertuples(index=False)
    return run_id, grader_id


def undefined(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def shown_as_missing(at: AppTest, element, column: str, row: int) -> bool:
    """The cell is undefined and the table draws undefined cells as MISSING ("—")."""
    return undefined(element.value[column].iloc[row]) and element.proto.placeholder == MISSING


def assert_human_tables(at: AppTest) -> None:
    """Issue #27's rule: no table draws None/NaN or holds raw JSON."""
    for element in at.dataframe:
        frame = element.value
        cells = frame.to_numpy().ravel().tolist()
        if any(undefined(v) for v in cells):
            assert element.proto.placeholder == MISSING, list(frame.columns)
        texts = [v.strip() for v in cells if isinstance(v, str)]
        assert not [t for t in texts if t in ("None", "nan", "NaN", "<NA>", "null")]
        assert not [t for t in texts if len(t) > 1 and t[0] in "{[" and t[-1] in "}]"]
        assert not [v for v in cells if isinstance(v, dict | list)]


def costed_file_figures(path: Path) -> dict[str, float]:
    """The imported file's own cost and latency, recounted from its rows."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    stated = [r["cost"] for r in records if r["cost"] is not None]
    latencies_ms = [1000 * r["latency"] for r in records]
    assert len(stated) == len(records) - 1  # one row states no cost: not counted as free
    return {
        "usd_per_1k": 1000 * statistics.fmean(stated),
        "run_cost_usd": math.fsum(stated),
        "p50_ms": statistics.median(latencies_ms),
        "p95_ms": float(np.percentile(latencies_ms, 95)),  # quantile_cont interpolates likewise
    }


def test_an_imported_run_shows_its_files_cost_and_latency(snap: CostSnapshot) -> None:
    expected = costed_file_figures(snap.costed_file)
    run_id, grader_id = import_side(snap.serve_db, COSTED_LANE)
    at = open_page("qa_leaderboard", {"run": run_id, "grader": grader_id})
    board = at.dataframe[0]
    (row,) = board.value.to_dict(orient="records")
    assert row["Lane"] == COSTED_LANE
    assert row["$/1k queries"] == pytest.approx(expected["usd_per_1k"], rel=1e-12)
    assert row["Run cost ($)"] == pytest.approx(expected["run_cost_usd"], rel=1e-12)
    assert row["Price basis"] == "imported"
    assert row["p50 (ms)"] == pytest.approx(expected["p50_ms"])
    assert row["p95 (ms)"] == pytest.approx(expected["p95_ms"])
    assert row["Latency source"] == "imported"
    assert shown_as_missing(at, board, "Price date", 0) or row["Price date"] == MISSING
    assert any("Imported results" in w.value for w in at.warning)
    assert any("the file's own per-row cost" in c.value.replace("\\", "") for c in at.caption)
    assert_human_tables(at)


def test_the_whatif_keeps_an_imported_files_total_until_its_price_changes(
    snap: CostSnapshot,
) -> None:
    """The QA what-if prices a lane as the rescore it prints would: unchanged, an imported
    lane keeps the file's own total (one of its rows states no cost, so the mean x attempted
    is not that total); repriced, it costs the new price x attempted."""
    from app import whatif

    expected = costed_file_figures(snap.costed_file)
    run_id, grader_id = import_side(snap.serve_db, COSTED_LANE)
    board = snapshot_rows(
        snap.serve_db,
        "select * from marts.qa_leaderboard where run_id = ? and grader_id = ?",
        [run_id, grader_id],
    )
    formulas = dict(
        snapshot_rows(
            snap.serve_db, "select formula, sql_text from marts.dim_scoring_formulas"
        ).itertuples(index=False)
    )
    published = {COSTED_LANE: float(board["usd_per_1k"].iloc[0])}
    (attempted,) = (board["n_landed"] + board["n_failed"]).tolist()
    assert expected["usd_per_1k"] * attempted / 1000 != pytest.approx(expected["run_cost_usd"])

    unchanged = whatif.qa_costs(board, dict(published), published, formulas)
    assert unchanged["run_cost_usd"].tolist() == [board["run_cost_usd"].iloc[0]]
    assert unchanged["run_cost_usd"].iloc[0] == pytest.approx(expected["run_cost_usd"], rel=1e-12)
    assert whatif.qa_rescore_command(3, 3, dict(published), published) is None

    repriced = whatif.qa_costs(board, {COSTED_LANE: 2.0}, published, formulas)
    assert repriced["usd_per_1k"].tolist() == [2.0]
    assert repriced["run_cost_usd"].iloc[0] == pytest.approx(2.0 * attempted / 1000, rel=1e-12)


def test_an_imported_file_without_cost_shows_a_dash_not_our_list_price(
    snap: CostSnapshot,
) -> None:
    run_id, grader_id = import_side(snap.serve_db, LISTED_LANE)
    # the mart falls back to the seed's list price for a lane of that name ...
    ((usd, basis),) = snapshot_rows(
        snap.serve_db,
        "select usd_per_1k, price_basis from marts.qa_leaderboard where run_id = ?",
        [run_id],
    ).itertuples(index=False)
    assert usd > 0 and basis == "list"
    # ... which is no figure of the imported harness: the page shows "—"
    at = open_page("qa_leaderboard", {"run": run_id, "grader": grader_id})
    board = at.dataframe[0]
    assert board.value["Lane"].tolist() == [LISTED_LANE]
    for column in ("$/1k queries", "Run cost ($)", "Price basis", "p50 (ms)", "p95 (ms)"):
        assert shown_as_missing(at, board, column, 0), column
    assert any("The imported file states no cost." in c.value for c in at.caption)
    assert_human_tables(at)


def test_imported_rows_beside_our_lanes_carry_their_own_cost(snap: CostSnapshot) -> None:
    expected = costed_file_figures(snap.costed_file)
    at = open_page("qa_leaderboard", {"run": snap.series_run})
    tables = {
        element.value["Lane"].iloc[0]: element
        for element in at.dataframe
        if "Strict accuracy (shared)" in element.value.columns
    }
    costed = tables[f"{COSTED_LANE} (imported)"]
    first = costed.value.iloc[0]
    assert first["$/1k queries"] == pytest.approx(expected["usd_per_1k"], rel=1e-12)
    assert first["Run cost ($)"] == pytest.approx(expected["run_cost_usd"], rel=1e-12)
    assert first["Price basis"] == "imported"
    assert first["p50 (ms)"] == pytest.approx(expected["p50_ms"])
    assert first["Shared questions"] == N_QUESTIONS
    listed = tables[f"{LISTED_LANE} (imported)"]
    for column in ("$/1k queries", "Run cost ($)", "Price basis", "p50 (ms)"):
        assert shown_as_missing(at, listed, column, 0), column
    # our lanes beside it keep their own (list) prices from this run's leaderboard
    ours = snapshot_rows(
        snap.serve_db,
        "select lane, usd_per_1k, price_basis from marts.qa_leaderboard where run_id = ?",
        [snap.series_run],
    ).set_index("lane")
    lanes = costed.value.iloc[1:]
    assert len(lanes) == len(ours)
    for lane, usd, basis in zip(
        lanes["Lane"], lanes["$/1k queries"], lanes["Price basis"], strict=True
    ):
        assert basis == ours.loc[lane, "price_basis"]
        assert usd == pytest.approx(ours.loc[lane, "usd_per_1k"], nan_ok=True)
    assert_human_tables(at)


def test_imports_page_shows_draco_cost_and_qa_published_figures(snap: CostSnapshot) -> None:
    at = open_page("imports")
    boards = [d for d in at.dataframe if "Mean cost ($/task)" in d.value.columns]
    by_system = {d.value["System"].iloc[i]: (d, i) for d in boards for i in range(len(d.value))}
    stated = [c for c in snap.draco_costs.values() if c is not None]
    element, i = by_system[DRACO_SYSTEM]
    assert element.value["Mean cost ($/task)"].iloc[i] == pytest.approx(statistics.fmean(stated))
    assert element.value["Tasks costed"].iloc[i] == len(stated) == 2
    element, i = by_system[SYSTEM]  # the valyu grading file states no cost
    assert shown_as_missing(at, element, "Mean cost ($/task)", i)
    assert element.value["Tasks costed"].iloc[i] == 0

    header = json.loads(snap.simple_evals_file.read_text(encoding="utf-8"))
    metadata = header["metadata"]["example_level_metadata"]
    recount = _answer_aggregates([m["grade"] for m in metadata])
    recount["strict_accuracy"] = recount["is_correct"]
    published = {**header["metrics"], "strict_accuracy": header["score"]}
    (figures,) = [d.value for d in at.dataframe if "Published as" in d.value.columns]
    labels = {
        "Strict accuracy": "strict_accuracy",
        "Correct": "is_correct",
        "Incorrect": "is_incorrect",
        "Not attempted": "is_not_attempted",
        "Acc. given attempted": "accuracy_given_attempted",
        "F1": "f1",
    }
    assert sorted(figures["Metric"]) == sorted(labels)
    for row in figures.to_dict(orient="records"):
        metric = labels[row["Metric"]]
        assert row["Published"] == pytest.approx(published[metric], abs=1e-12)
        assert row["Ours"] == pytest.approx(recount[metric], abs=1e-12)
        assert row["Difference"] == pytest.approx(recount[metric] - published[metric], abs=1e-12)
        assert row["Matches"] == ("NO" if metric == "f1" else "yes")
        assert row["Questions"] == N_QUESTIONS
    assert set(figures["Published as"]) == {"score"} | {f"metrics.{k}" for k in header["metrics"]}
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["QA figures reproduced to 4 decimals"] == f"{len(figures) - 1} of 6"
    assert_human_tables(at)
