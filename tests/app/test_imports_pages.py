"""The app on imported results and the answer-product series, marts built by dbt from real
events (tests/app/fixture_imports_snapshot.py): the imported DRACO leaderboard with our
recomputation beside the file's own published figure, every published figure reproduced, the
imported regime beside our re-judging, and the series per vertical with the run-1 view, answer
lanes never ranked with synthesised ones.

Expected values come from the imported file itself or the snapshot read with plain DuckDB,
never through app.data.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from app_harness import APP_SCRIPT, TIMEOUT_S, snapshot_rows
from fixture_imports_snapshot import (
    ANSWER_LANES,
    SERIES,
    SYSTEM,
    VERTICALS,
    ImportsSnapshot,
    imports_snapshot,
    install,
)
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def imports_source(tmp_path_factory: pytest.TempPathFactory) -> ImportsSnapshot:
    return imports_snapshot(tmp_path_factory)


@pytest.fixture
def snapshot(bench_home: Path, imports_source: ImportsSnapshot) -> Path:
    return install(imports_source, bench_home)


def open_page(page: str) -> AppTest:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=TIMEOUT_S)
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def frame_with(at: AppTest, column: str) -> pd.DataFrame:
    """The one dataframe on the page that has `column`."""
    (frame,) = [d.value for d in at.dataframe if column in d.value.columns]
    return frame


def chart_rows(element) -> list[int]:
    return [
        pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all().num_rows
        for d in element.proto.datasets
    ]


def test_imported_leaderboard_shows_the_published_figure_beside_ours(
    snapshot: Path, imports_source: ImportsSnapshot
) -> None:
    published = json.loads(imports_source.grading_file.read_text())
    at = open_page("imports")
    board = frame_with(at, "Score (published)")
    (row,) = board.to_dict(orient="records")
    assert row["System"] == SYSTEM
    assert row["Score (published)"] == pytest.approx(100 * published["overall_score"], abs=1e-9)
    assert row["Pass rate (published)"] == pytest.approx(100 * published["overall_pass_rate"])
    # our recomputation from the imported verdicts reproduces the file (to 4 decimals, 0-1)
    assert row["Score (ours)"] == pytest.approx(100 * published["overall_score"], abs=1e-2)
    assert row["Difference"] == pytest.approx(row["Score (ours)"] - row["Score (published)"])
    assert row["Items in file"] == published["n_items"]
    assert any("Imported, not judged here" in w.value.replace("\\", "") for w in at.warning)

    figures = frame_with(at, "Matches")
    domains = published["domain_scores"]
    assert len(figures) == 2 * (1 + len(domains))  # score and pass rate: overall + each domain
    assert set(figures["Matches"]) == {"yes"}
    by_scope = figures[figures["Metric"] == "score"].set_index("Scope")["Published"]
    for domain, score in domains.items():
        assert by_scope[f"domain: {domain}"] == pytest.approx(100 * score)
    assert {m.label: m.value for m in at.metric}["Reproduced to 4 decimals"] == (
        f"{len(figures)} of {len(figures)}"
    )


def test_imported_regime_beside_our_rejudging(
    snapshot: Path, imports_source: ImportsSnapshot
) -> None:
    ours = snapshot_rows(
        snapshot,
        "select judge_id, score_mean from marts.draco_leaderboard where run_id = ?",
        [imports_source.inference_run],
    )
    (our_judge,) = ours["judge_id"].tolist()
    imported = snapshot_rows(
        snapshot, "select score_mean_all_tasks from marts.draco_imported_leaderboard"
    )
    at = open_page("imports")
    (row,) = frame_with(at, "Imported regime").to_dict(orient="records")
    assert row["System"] == SYSTEM and row["Our judge"] == our_judge
    assert row["Imported regime"].endswith("(imported, not judged here)")
    assert row["Our score"] == pytest.approx(100 * ours["score_mean"].iloc[0])
    assert row["Imported score"] == pytest.approx(100 * imported.iloc[0, 0])
    assert row["Difference"] == pytest.approx(row["Our score"] - row["Imported score"])
    (chart,) = at.get("vega_lite_chart")
    assert chart_rows(chart) == [2]  # one bar per regime of the one system


def test_series_per_vertical_run1_by_kind_and_the_order_confound(snapshot: Path) -> None:
    at = open_page("qa_series")
    charts = at.get("vega_lite_chart")
    assert len(charts) == 1 + len(VERTICALS)  # the overall curve, then one per vertical
    per_vertical = snapshot_rows(
        snapshot,
        "select vertical, count(*) as n from marts.fct_series_vertical_accuracy "
        "where series = ? and vertical <> '(all)' group by vertical order by vertical",
        [SERIES],
    )
    assert per_vertical["vertical"].tolist() == sorted(VERTICALS)
    for chart, n in zip(charts[1:], per_vertical["n"], strict=True):
        assert chart_rows(chart) == [n]  # one point per (lane, run), band and line alike

    run1 = snapshot_rows(
        snapshot,
        "select lane, lane_kind, run1_rank, order_confound from marts.series_run1 "
        "where series = ? and vertical = '(all)'",
        [SERIES],
    )
    run1_tables = [d.value for d in at.dataframe if "Rank (run 1)" in d.value.columns]
    (answers,) = [t for t in run1_tables if set(t["Lane"]) & set(ANSWER_LANES)]
    (closed,) = [t for t in run1_tables if not set(t["Lane"]) & set(ANSWER_LANES)]
    assert sorted(answers["Lane"]) == sorted(ANSWER_LANES)  # their own table
    assert closed["Lane"].tolist() == ["closed-book"]
    expected = run1.set_index("lane")["run1_rank"]
    assert answers.set_index("Lane")["Rank (run 1)"].to_dict() == {
        lane: expected[lane] for lane in ANSWER_LANES
    }
    (confound,) = set(run1["order_confound"])
    assert any(confound in w.value.replace("\\", "") for w in at.warning)


def test_qa_leaderboard_never_ranks_answer_lanes_with_synthesised_ones(snapshot: Path) -> None:
    at = open_page("qa_leaderboard")
    assert at.dataframe[0].value["Lane"].tolist() == ["closed-book"]
    at.radio(key="qa_board_kind").set_value("vendor_answer").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert sorted(table["Lane"]) == sorted(ANSWER_LANES)
    assert table["Rank"].min() == 1
