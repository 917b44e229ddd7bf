"""AppTests of the cross-run comparison (issue #27 "Compare runs"): any two sides (run or
import, lane, grader/judge regime) on the items they share, the series' run-over-run change
question by question, and imported QA results beside our own lanes.

Snapshots from REAL events and a real dbt build: the app snapshot (a two-run QA series and two
extraction runs, tests/app/fixture_app_snapshot.py) with a SimpleQA results file on its five
questions imported through the real `bench import qa-results` and an extractor's predictions on
the `app-articles` pages through the real `bench import extraction-predictions` (both built once
here, in one build), and the DRACO snapshot (one run, two systems, several judge regimes).
Expectations are recounted from the marts with plain DuckDB and scipy, never through app.data.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import duckdb
import pandas as pd
import pytest
from app_harness import APP_SCRIPT, TIMEOUT_S, snapshot_rows
from fixture_app_snapshot import CORPORA, AppSnapshot, app_snapshot
from fixture_draco_snapshot import DracoSnapshot, draco_snapshot
from fixture_draco_snapshot import install as install_draco
from scipy import stats
from streamlit.testing.v1 import AppTest

from tests.bench_cli import run_bench
from tests.shared_build import built_once
from warehouse.metric_scales import MISSING

pytestmark = pytest.mark.slow  # real runs -> dlt -> dbt -> publish, and a real import + build

REPO = Path(__file__).resolve().parents[2]
IMPORT_LANE = "their_harness"
IMPORT_MAP = "question=problem,answer=predicted,grade=grade,latency_s=latency"
COMPARE_PAGE = "app_pages/run_compare.py"
PREDICTIONS_CORPUS = "app-articles"
PREDICTIONS_SYSTEM = "their-extractor"


@dataclass(frozen=True)
class CompareSnapshot:
    app: AppSnapshot
    serve_db: Path
    import_run_id: str
    import_grader_id: str
    predictions_run_id: str  # the imported extraction predictions on PREDICTIONS_CORPUS


def _import_opposite_of_the_baseline(app: AppSnapshot, home: Path) -> None:
    """A results file on the series' five questions whose grade is the opposite of the baseline
    lane's label in run 1 on the first four questions and the same on the last: wins, losses
    (when run 1 has both labels) and a tie against that lane."""
    own = snapshot_rows(
        app.serve_db,
        "select problem, gold_answer, label from marts.fct_qa_answers "
        "where run_id = ? and lane = ? and grader_id = ? order by sample_order",
        [app.qa_run_ids[0], app.baseline, app.grader_id],
    )
    path = home / "their_results.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for position, row in enumerate(own.itertuples()):
            correct = row.label == "correct"
            graded_correct = correct if position == len(own) - 1 else not correct
            record = {
                "problem": row.problem,
                "predicted": row.gold_answer if graded_correct else "something else",
                "grade": "A" if graded_correct else "B",
                "latency": 1.5 + position,
            }
            handle.write(json.dumps(record) + "\n")
    done = run_bench(
        home, "import", "qa-results", str(path), "--format", "jsonl",
        "--lane", IMPORT_LANE, "--grader-label", "their-grader", "--map", IMPORT_MAP,
        env={"COLUMNS": "200"}, cwd=REPO, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "unmatched" not in done.output


def _import_predictions(home: Path) -> None:
    """Another extractor's predictions on the `app-articles` pages (not built: the QA import's
    build that follows builds both): the first page exact, the second half-extracted, the third
    (an empty response body our engines get nothing from) exact, the fourth left out of the file
    (a `missing_prediction` failure, scored 0)."""
    truth = {item: text for item, (_url, text, _html) in CORPORA[PREDICTIONS_CORPUS].items()}
    first, second, third, _left_out = sorted(truth)
    predictions = {
        first: {"articleBody": truth[first]},
        second: {"articleBody": truth[second].split(". ")[0] + "."},
        third: {"articleBody": truth[third]},
    }
    path = home / "their_predictions.json"
    path.write_text(json.dumps(predictions), encoding="utf-8")
    done = run_bench(
        home, "import", "extraction-predictions", str(path),
        "--system", PREDICTIONS_SYSTEM, "--version", "1",
        "--corpus", str(home / "corpora" / PREDICTIONS_CORPUS), "--no-score",
        env={"COLUMNS": "200"}, cwd=REPO, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


def _build(app: AppSnapshot, home: Path) -> CompareSnapshot:
    shutil.copytree(app.home, home / "home")  # the app snapshot's log and warehouse, then more
    home = home / "home"
    _import_predictions(home)
    _import_opposite_of_the_baseline(app, home)
    imported = snapshot_rows(
        home / "serve.duckdb",
        "select distinct answers.run_id, answers.grader_id from marts.fct_qa_answers answers "
        "join marts.dim_runs runs using (run_id) where runs.run_source = 'import'",
    )
    assert len(imported) == 1, imported
    predictions = snapshot_rows(
        home / "serve.duckdb",
        "select distinct pages.run_id from marts.fct_extraction_pages pages "
        "join marts.dim_runs runs using (run_id) where runs.run_source = 'import'",
    )
    assert len(predictions) == 1, predictions
    return CompareSnapshot(
        app,
        home / "serve.duckdb",
        imported["run_id"].iloc[0],
        imported["grader_id"].iloc[0],
        predictions["run_id"].iloc[0],
    )


@pytest.fixture(scope="session")
def compare_source(tmp_path_factory: pytest.TempPathFactory) -> CompareSnapshot:
    app = app_snapshot(tmp_path_factory)
    return built_once(tmp_path_factory, "compare-home", lambda home: _build(app, home))


@pytest.fixture
def snap(bench_home: Path, compare_source: CompareSnapshot) -> CompareSnapshot:
    target = bench_home / "serve.duckdb"
    shutil.copyfile(compare_source.serve_db, target)
    return replace(compare_source, serve_db=target)


def open_page(page: str, query_params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page(page)
    at.query_params.update(query_params)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def table_with(at: AppTest, column: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if column in d.value.columns)


def side(run_id: str, lane: str, regime: str) -> str:
    return f"{run_id}|{lane}|{regime}"


# --- the independent recount ------------------------------------------------------------------


def qa_side(db: Path, run_id: str, lane: str, grader_id: str) -> dict[str, tuple[bool, str | None]]:
    """item_id -> (landed, label) of one QA side, read straight from fct_qa_answers."""
    frame = snapshot_rows(
        db,
        "select item_id, landed, label from marts.fct_qa_answers "
        "where run_id = ? and lane = ? and (grader_id = ? or grader_id is null)",
        [run_id, lane, grader_id],
    )
    return {r.item_id: (bool(r.landed), r.label) for r in frame.itertuples()}


def recount(a: dict, b: dict) -> tuple[dict[str, int], list[float], list[float]]:
    """Wins/losses/ties/unpaired of A against B (a question counts only when both landed it),
    and the paired 0/1 correct vectors."""
    counts = {"win": 0, "loss": 0, "tie": 0, "unpaired": 0}
    xs: list[float] = []
    ys: list[float] = []
    for item in sorted(set(a) & set(b)):
        (landed_a, label_a), (landed_b, label_b) = a[item], b[item]
        if not (landed_a and landed_b):
            counts["unpaired"] += 1
            continue
        x, y = float(label_a == "correct"), float(label_b == "correct")
        counts["win" if x > y else "loss" if x < y else "tie"] += 1
        xs.append(x)
        ys.append(y)
    return counts, xs, ys


def scipy_ttest_p(xs: list[float], ys: list[float]) -> float | None:
    """scipy.stats.ttest_rel's two-sided p; identical vectors are 'no difference' (p = 1)."""
    if len(xs) < 2:
        return None
    p = stats.ttest_rel(xs, ys).pvalue
    return 1.0 if math.isnan(p) else float(p)


def shown_metrics(at: AppTest) -> dict[str, int]:
    return {m.label: int(m.value) for m in at.metric}


# --- QA: an import against a run, two runs, one run ---------------------------------------------


def test_an_import_against_a_run_counts_wins_losses_ties_and_the_paired_p(
    snap: CompareSnapshot,
) -> None:
    app = snap.app
    a = side(snap.import_run_id, IMPORT_LANE, snap.import_grader_id)
    b = side(app.qa_run_ids[0], app.baseline, app.grader_id)
    at = open_page(COMPARE_PAGE, {"family": "qa", "a": a, "b": b})
    assert [t.value for t in at.title] == ["Compare runs"]
    assert [s.value for s in at.selectbox] == ["qa", a, b]
    assert any("different regimes" in w.value for w in at.warning)

    counts, xs, ys = recount(
        qa_side(snap.serve_db, snap.import_run_id, IMPORT_LANE, snap.import_grader_id),
        qa_side(snap.serve_db, app.qa_run_ids[0], app.baseline, app.grader_id),
    )
    assert counts["win"] + counts["loss"] == 4 and counts["tie"] == 1  # the file's premise
    metrics = shown_metrics(at)
    assert (metrics["A wins"], metrics["B wins"], metrics["Ties"], metrics["Unpaired"]) == (
        counts["win"],
        counts["loss"],
        counts["tie"],
        counts["unpaired"],
    )
    assert metrics["Paired items"] == len(xs) == 5
    test = table_with(at, "p_ttest").iloc[0]
    assert test["n_pairs"] == len(xs)
    assert test["p_ttest"] == pytest.approx(scipy_ttest_p(xs, ys))
    assert test["mean_diff"] == pytest.approx(sum(xs) / len(xs) - sum(ys) / len(ys))
    assert test["p_wilcoxon"] == pytest.approx(stats.wilcoxon(xs, ys).pvalue)

    per_item = table_with(at, "label_a")
    assert len(per_item) == 5 and set(per_item["result"]) <= {"win", "loss", "tie"}
    at.radio[0].set_value("differences only").run()
    assert len(table_with(at, "label_a")) == counts["win"] + counts["loss"]


def test_two_runs_of_a_lane_pair_on_the_shared_questions(snap: CompareSnapshot) -> None:
    app = snap.app
    run1, run2 = app.qa_run_ids
    moved = []
    for lane in app.lanes:
        counts, xs, ys = recount(
            qa_side(snap.serve_db, run2, lane, app.grader_id),
            qa_side(snap.serve_db, run1, lane, app.grader_id),
        )
        a, b = side(run2, lane, app.grader_id), side(run1, lane, app.grader_id)
        at = open_page(COMPARE_PAGE, {"family": "qa", "a": a, "b": b})
        metrics = shown_metrics(at)
        assert (metrics["A wins"], metrics["B wins"], metrics["Ties"], metrics["Unpaired"]) == (
            counts["win"],
            counts["loss"],
            counts["tie"],
            counts["unpaired"],
        ), lane
        assert not at.warning  # one grader regime on both sides
        shown_p = table_with(at, "p_ttest").iloc[0]["p_ttest"]
        expected = scipy_ttest_p(xs, ys)
        assert (pd.isna(shown_p) and expected is None) or shown_p == pytest.approx(expected)
        if counts["win"] + counts["loss"]:
            moved.append(lane)
    assert moved  # the fixture's premise: a lane answered differently in run 2


def test_a_pair_the_mart_tested_gets_the_marts_own_p_value(snap: CompareSnapshot) -> None:
    """Same run, a lane against the baseline: the page's test is fct_qa_significance's, unadjusted."""
    app = snap.app
    run1 = app.qa_run_ids[0]
    stored = snapshot_rows(
        snap.serve_db,
        "select lane, n_pairs, p_value from marts.fct_qa_significance "
        "where run_id = ? and grader_id = ? and metric = 'accuracy' and p_value is not null",
        [run1, app.grader_id],
    )
    assert not stored.empty
    for row in stored.itertuples():
        at = open_page(
            COMPARE_PAGE,
            {
                "family": "qa",
                "a": side(run1, row.lane, app.grader_id),
                "b": side(run1, app.baseline, app.grader_id),
            },
        )
        test = table_with(at, "p_ttest").iloc[0]
        assert test["n_pairs"] == row.n_pairs
        assert test["p_ttest"] == pytest.approx(row.p_value), row.lane


def test_series_shows_each_runs_change_question_by_question(snap: CompareSnapshot) -> None:
    app = snap.app
    run1, run2 = app.qa_run_ids
    at = open_page("app_pages/qa_series.py", {"series": app.series, "grader": app.grader_id})
    assert "Run over run, question by question" in [s.value for s in at.subheader]
    changes = table_with(at, "Gained").set_index("Lane")
    assert sorted(changes.index) == sorted(app.lanes)
    for lane in app.lanes:
        counts, xs, ys = recount(
            qa_side(snap.serve_db, run2, lane, app.grader_id),
            qa_side(snap.serve_db, run1, lane, app.grader_id),
        )
        row = changes.loc[lane]
        assert row["Run"] == "1 → 2"
        assert (row["Gained"], row["Lost"], row["Unchanged"], row["Unpaired"]) == (
            counts["win"],
            counts["loss"],
            counts["tie"],
            counts["unpaired"],
        ), lane
        assert row["Net (questions)"] == counts["win"] - counts["loss"]
        expected = scipy_ttest_p(xs, ys)
        assert (pd.isna(row["p (paired t)"]) and expected is None) or row[
            "p (paired t)"
        ] == pytest.approx(expected)
        link = urlparse(row["Compare"])
        assert link.path == "run_compare"
        assert parse_qs(link.query) == {
            "family": ["qa"],
            "a": [side(run2, lane, app.grader_id)],
            "b": [side(run1, lane, app.grader_id)],
        }


def test_runs_page_links_each_qa_lane_to_the_comparison(snap: CompareSnapshot) -> None:
    app = snap.app
    run1 = app.qa_run_ids[0]
    at = open_page("app_pages/runs.py", {"run": run1})
    systems = table_with(at, "compare").set_index("system")
    for lane in app.lanes:
        link = urlparse(systems.loc[lane, "compare"])
        assert link.path == "run_compare"
        assert parse_qs(link.query) == {"family": ["qa"], "run": [run1], "lane": [lane]}
    # the link starts side A on that run and lane
    at = open_page(COMPARE_PAGE, {"family": "qa", "run": run1, "lane": "brave_search"})
    assert at.selectbox[1].value == side(run1, "brave_search", app.grader_id)


def test_runs_page_links_each_extraction_engine_to_the_comparison(snap: CompareSnapshot) -> None:
    app = snap.app
    run_id = app.extraction_runs[PREDICTIONS_CORPUS]
    at = open_page("app_pages/runs.py", {"run": run_id})
    systems = table_with(at, "compare").set_index("system")
    engines = sorted(systems.index[systems["family"] == "extraction"])
    assert "trafilatura" in engines
    for engine in engines:
        link = urlparse(systems.loc[engine, "compare"])
        assert link.path == "run_compare"
        assert parse_qs(link.query) == {"family": ["extraction"], "run": [run_id], "lane": [engine]}
    # the link starts side A on that run and engine
    at = open_page(COMPARE_PAGE, {"family": "extraction", "run": run_id, "lane": "trafilatura"})
    assert at.selectbox[1].value == f"{run_id}|trafilatura"


# --- imported QA results beside our own lanes ---------------------------------------------------


def test_imported_results_stand_beside_the_runs_lanes(snap: CompareSnapshot) -> None:
    app = snap.app
    their = qa_side(snap.serve_db, snap.import_run_id, IMPORT_LANE, snap.import_grader_id)
    their_accuracy = sum(label == "correct" for _landed, label in their.values()) / len(their)

    at = open_page("app_pages/imports.py", {})
    assert "Imported QA results beside your lanes" in [s.value for s in at.subheader]
    beside = table_with(at, "Import accuracy").set_index(["Run", "Lane"])
    expected_sides = {(run, lane) for run in app.qa_run_ids for lane in app.lanes}
    assert set(beside.index) == expected_sides
    for run_id, lane in expected_sides:
        own = qa_side(snap.serve_db, run_id, lane, app.grader_id)
        shared = set(own) & set(their)
        row = beside.loc[(run_id, lane)]
        assert row["Shared questions"] == len(shared) == 5
        assert row["Source"] == "run"
        assert row["Lane accuracy"] == pytest.approx(
            sum(own[i][1] == "correct" for i in shared) / len(shared)
        )
        assert row["Import accuracy"] == pytest.approx(their_accuracy)

    at = open_page(
        "app_pages/qa_leaderboard.py", {"run": app.qa_run_ids[0], "grader": app.grader_id}
    )
    assert "Imported results on the same questions" in [s.value for s in at.subheader]
    board = table_with(at, "Strict accuracy (shared)").set_index("Lane")
    assert list(board.index) == [f"{IMPORT_LANE} (imported)", *sorted(app.lanes)]
    assert board.loc[f"{IMPORT_LANE} (imported)", "Strict accuracy (shared)"] == pytest.approx(
        their_accuracy
    )
    assert board.loc[f"{IMPORT_LANE} (imported)", "Source"].startswith(
        f"import {snap.import_run_id}"
    )
    link = parse_qs(urlparse(board.loc[app.baseline, "Compare"]).query)
    assert link["b"] == [side(snap.import_run_id, IMPORT_LANE, snap.import_grader_id)]


# --- deep research --------------------------------------------------------------------------------


@pytest.fixture
def draco(bench_home: Path, tmp_path_factory: pytest.TempPathFactory) -> DracoSnapshot:
    source = draco_snapshot(tmp_path_factory)
    return replace(source, serve_db=install_draco(source, bench_home))


def draco_scores(db: Path, run_id: str, lane: str, judge_id: str) -> dict[str, float]:
    frame = snapshot_rows(
        db,
        "select item_id, score from marts.fct_draco_items "
        "where run_id = ? and lane = ? and judge_id = ?",
        [run_id, lane, judge_id],
    )
    return dict(zip(frame["item_id"], frame["score"].astype(float), strict=True))


def test_draco_sides_across_judge_regimes_and_the_marts_own_pair(draco: DracoSnapshot) -> None:
    lane = draco.lanes[0]
    judge_a, judge_b = draco.judge_ids[0], draco.judge_ids[2]  # offline n=2 vs the flaky judge
    a, b = side(draco.run_id, lane, judge_a), side(draco.run_id, lane, judge_b)
    at = open_page(COMPARE_PAGE, {"family": "draco", "a": a, "b": b})
    assert [s.value for s in at.selectbox] == ["draco", a, b]
    assert any("different regimes" in w.value for w in at.warning)
    scores_a = draco_scores(draco.serve_db, draco.run_id, lane, judge_a)
    scores_b = draco_scores(draco.serve_db, draco.run_id, lane, judge_b)
    items = sorted(set(scores_a) & set(scores_b))
    xs, ys = [scores_a[i] for i in items], [scores_b[i] for i in items]
    metrics = shown_metrics(at)
    assert (metrics["A wins"], metrics["B wins"], metrics["Ties"]) == (
        sum(x > y for x, y in zip(xs, ys, strict=True)),
        sum(x < y for x, y in zip(xs, ys, strict=True)),
        sum(x == y for x, y in zip(xs, ys, strict=True)),
    )
    assert metrics["A wins"] + metrics["B wins"] > 0  # the flaky judge's premise
    test = table_with(at, "p_ttest").iloc[0]
    assert test["n_pairs"] == len(items)
    assert test["p_ttest"] == pytest.approx(scipy_ttest_p(xs, ys))
    assert test["mean_diff"] == pytest.approx(100 * (sum(xs) - sum(ys)) / len(xs))  # points
    per_item = table_with(at, "score_a").set_index("item_id")
    assert per_item["score_a"].to_dict() == pytest.approx({i: 100 * scores_a[i] for i in items})

    # Two systems under one judge: the page's tests are fct_draco_significance's, unadjusted.
    stored = snapshot_rows(
        draco.serve_db,
        "select lane_a, lane_b, p_ttest, p_wilcoxon from marts.fct_draco_significance "
        "where run_id = ? and judge_id = ?",
        [draco.run_id, judge_a],
    ).iloc[0]
    at = open_page(
        COMPARE_PAGE,
        {
            "family": "draco",
            "a": side(draco.run_id, stored["lane_a"], judge_a),
            "b": side(draco.run_id, stored["lane_b"], judge_a),
        },
    )
    test = table_with(at, "p_ttest").iloc[0]
    assert test["p_ttest"] == pytest.approx(stored["p_ttest"])
    assert (pd.isna(test["p_wilcoxon"]) and pd.isna(stored["p_wilcoxon"])) or test[
        "p_wilcoxon"
    ] == pytest.approx(stored["p_wilcoxon"])


def test_lane_vs_lane_links_to_the_same_pair_with_the_same_counts(snap: CompareSnapshot) -> None:
    app = snap.app
    run1 = app.qa_run_ids[0]
    at = open_page(
        "app_pages/qa_compare.py",
        {"run": run1, "grader": app.grader_id, "a": "brave_search", "b": app.baseline},
    )
    (link,) = [
        m.value.split("](", 1)[1].rstrip(").") for m in at.markdown if "compare runs" in m.value
    ]
    target = urlparse(link)
    assert target.path == "run_compare"
    query = {k: v[0] for k, v in parse_qs(target.query).items()}
    assert query == {
        "family": "qa",
        "a": side(run1, "brave_search", app.grader_id),
        "b": side(run1, app.baseline, app.grader_id),
    }
    within_run = {
        m.label: int(m.value)
        for m in at.metric
        if "wins" in m.label or m.label in ("Ties", "Unpaired")
    }
    across = shown_metrics(open_page(COMPARE_PAGE, query))
    for label in ("A wins", "B wins", "Ties", "Unpaired"):
        assert across[label] == within_run[label], label


# --- extraction -----------------------------------------------------------------------------------


def page_f1s(db: Path, run_id: str, system: str) -> dict[str, float | None]:
    """item_id -> the page's shingle F1 from fct_extraction_pages, recomputed here: 2PR / (P + R)
    of its shingle precision and recall (0 when P + R = 0), a failed page 0, a missing page
    (no terminal event) None."""
    frame = snapshot_rows(
        db,
        "select item_id, outcome, page_precision, page_recall from marts.fct_extraction_pages "
        "where run_id = ? and system = ?",
        [run_id, system],
    )
    f1s: dict[str, float | None] = {}
    for row in frame.itertuples():
        p, r = float(row.page_precision), float(row.page_recall)
        if row.outcome == "missing":
            f1s[row.item_id] = None
        elif row.outcome != "completed" or p + r == 0:
            f1s[row.item_id] = 0.0
        else:
            f1s[row.item_id] = 2 * p * r / (p + r)
    return f1s


def recount_pages(a: dict, b: dict) -> tuple[dict[str, int], list[float], list[float]]:
    """Wins/losses/ties of A by page F1 on the pages both have a result for; unpaired = shared
    pages missing on a side."""
    counts = {"win": 0, "loss": 0, "tie": 0, "unpaired": 0}
    xs: list[float] = []
    ys: list[float] = []
    for item in sorted(set(a) & set(b)):
        x, y = a[item], b[item]
        if x is None or y is None:
            counts["unpaired"] += 1
            continue
        counts["win" if x > y else "loss" if x < y else "tie"] += 1
        xs.append(x)
        ys.append(y)
    return counts, xs, ys


def scipy_wilcoxon_p(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 2:
        return None
    if xs == ys:
        return 1.0
    try:
        return float(stats.wilcoxon(xs, ys).pvalue)
    except ValueError:  # scipy refuses (e.g. every difference zero after dropping ties)
        return None


def same_or_both_undefined(shown, expected) -> bool:
    return (pd.isna(shown) and expected is None) or shown == pytest.approx(expected)


def assert_extraction_pair(
    at: AppTest, db: Path, side_a: tuple[str, str], side_b: tuple[str, str]
) -> dict[str, int]:
    """The page's tally, paired test and per-page rows equal the recount from the mart; returns
    the recounted tally."""
    f1_a, f1_b = page_f1s(db, *side_a), page_f1s(db, *side_b)
    counts, xs, ys = recount_pages(f1_a, f1_b)
    metrics = shown_metrics(at)
    assert (metrics["A wins"], metrics["B wins"], metrics["Ties"], metrics["Unpaired"]) == (
        counts["win"],
        counts["loss"],
        counts["tie"],
        counts["unpaired"],
    )
    assert metrics["Paired items"] == len(xs)
    assert metrics["Only one side"] == len(set(f1_a) ^ set(f1_b))
    test = table_with(at, "p_ttest").iloc[0]
    assert test["metric"] == "page shingle F1"
    assert test["n_pairs"] == len(xs)
    assert test["mean_a"] == f"{sum(xs) / len(xs):.3f}"  # shingle F1's one scale: 0-1, 3 digits
    assert test["mean_diff"] == pytest.approx(sum(xs) / len(xs) - sum(ys) / len(ys))
    assert same_or_both_undefined(test["p_ttest"], scipy_ttest_p(xs, ys))
    if test["t_stat"] is not None and not pd.isna(test["t_stat"]):
        assert test["t_stat"] == pytest.approx(float(stats.ttest_rel(xs, ys).statistic))
    assert same_or_both_undefined(test["p_wilcoxon"], scipy_wilcoxon_p(xs, ys))

    per_page = table_with(at, "page_f1_a").set_index("item_id")
    assert sorted(per_page.index) == sorted(set(f1_a) | set(f1_b))
    for item, row in per_page.iterrows():
        assert same_or_both_undefined(row["page_f1_a"], f1_a.get(item)), item
        assert same_or_both_undefined(row["page_f1_b"], f1_b.get(item)), item
        for side, (run_id, system), f1 in (("a", side_a, f1_a), ("b", side_b, f1_b)):
            link = row[f"lineage_{side}"]
            if item not in f1:
                assert link is None or pd.isna(link), (item, side)
                continue
            target = urlparse(link)
            assert target.path == "item_lineage"
            assert parse_qs(target.query) == {"run": [run_id], "system": [system], "item": [item]}
    # human labels, "—" for undefined: no None/NaN text, and the undefined cells drawn as MISSING
    for element in at.dataframe:
        assert element.proto.placeholder == MISSING
        for column in element.value.columns:
            assert not any(
                isinstance(v, str) and v.strip() in ("None", "nan", "NaN", "<NA>")
                for v in element.value[column]
            ), column
    return counts


def test_imported_predictions_against_an_engine_page_by_page(snap: CompareSnapshot) -> None:
    app = snap.app
    engine_run = app.extraction_runs[PREDICTIONS_CORPUS]
    side_a = (snap.predictions_run_id, PREDICTIONS_SYSTEM)
    side_b = (engine_run, "trafilatura")
    a, b = "|".join(side_a), "|".join(side_b)
    at = open_page(COMPARE_PAGE, {"family": "extraction", "a": a, "b": b})
    assert [s.value for s in at.selectbox] == ["extraction", a, b]
    assert not at.warning  # no grader or judge regime to differ
    counts = assert_extraction_pair(at, snap.serve_db, side_a, side_b)
    # the file's premise: an exact page where the engine got nothing (a win), a page the file
    # left out (a failure at 0 against the engine's text: a loss); every page has a result
    assert counts["win"] >= 1 and counts["loss"] >= 1 and counts["unpaired"] == 0
    assert sum(counts.values()) == len(CORPORA[PREDICTIONS_CORPUS])
    per_page = table_with(at, "page_f1_a").set_index("item_id")
    left_out = sorted(CORPORA[PREDICTIONS_CORPUS])[-1]
    assert per_page.loc[left_out, "outcome_text_a"] == "failed (missing prediction)"
    assert per_page.loc[left_out, "result"] == "loss"

    # a row's lineage link opens that page of that run
    at = open_page(
        "app_pages/item_lineage.py", {"run": side_a[0], "system": side_a[1], "item": left_out}
    )
    assert not at.warning
    assert any(f"item {left_out} · outcome failed" in t.value for t in at.text)


def test_two_engines_of_one_run_a_failed_page_scores_0_a_missing_one_is_unpaired(
    snap: CompareSnapshot,
) -> None:
    app = snap.app
    run_id, failed_item = app.failed["run"], app.failed["item"]
    side_a, side_b = (run_id, app.failed["system"]), (run_id, "trafilatura")
    at = open_page(COMPARE_PAGE, {"family": "extraction", "run": run_id, "lane": side_a[1]})
    assert at.selectbox[1].value == "|".join(side_a)  # ?run=&lane= starts side A there
    query = {"family": "extraction", "a": "|".join(side_a), "b": "|".join(side_b)}
    at = open_page(COMPARE_PAGE, query)
    counts = assert_extraction_pair(at, snap.serve_db, side_a, side_b)
    assert counts["unpaired"] == 0
    per_page = table_with(at, "page_f1_a").set_index("item_id")
    failed = per_page.loc[failed_item]  # the engine's failure is a result: paired, at 0
    assert failed["outcome_text_a"] == f"failed ({app.failed['error_class']})"
    assert failed["page_f1_a"] == 0.0 and failed["result"] in ("tie", "loss")

    # A page with no terminal result (the mart's `missing` row: registered, never extracted by
    # that system) is not a loss: unpaired. The offline runner appends an item's engines in one
    # write, so the fixture's events leave none; one is planted in this copy of the mart.
    missing_item = sorted(set(per_page.index) - {failed_item})[0]
    with duckdb.connect(str(snap.serve_db)) as con:
        con.execute(
            "update marts.fct_extraction_pages set outcome = 'missing', attempt = null, "
            "output_text = null, extraction_event_id = null, page_precision = 0, "
            "page_recall = 0, raw_success = false, useful_success = false "
            "where run_id = ? and system = ? and item_id = ?",
            [run_id, side_a[1], missing_item],
        )
    at = open_page(COMPARE_PAGE, query)
    counts = assert_extraction_pair(at, snap.serve_db, side_a, side_b)
    assert counts["unpaired"] == 1
    row = table_with(at, "page_f1_a").set_index("item_id").loc[missing_item]
    assert row["result"] == "unpaired" and row["outcome_text_a"] == "missing"
    assert pd.isna(row["page_f1_a"]) and pd.isna(row["page_f1_diff"])  # drawn as "—"
