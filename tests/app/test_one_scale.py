"""One scale per metric, human tables, and an extraction headline that follows its ranking, on
the real-events snapshot (tests/app/fixture_real_snapshot.py: what `bench demo` runs).

* The same DRACO run's score reads the same (points out of 100, warehouse/metric_scales.py) in
  the leaderboard table, the chart's data, the what-if panel and `bench scorecard`, each checked
  against 100 x draco_leaderboard.score_mean read here with DuckDB.
* No table cell on the pages below is drawn as "None"/"nan" or holds a JSON object.
* The extraction page's "Top system" is the first row of the ranking it shows.
* The CLI summary (bench.run_report) ranks one dataset / judge regime per table, on the app's
  scales.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from app_harness import APP_SCRIPT, TIMEOUT_S, snapshot_rows
from fixture_real_snapshot import RealSnapshot, install, real_snapshot
from rich.console import Console
from streamlit.testing.v1 import AppTest

from tests.bench_cli import run_bench
from warehouse.metric_scales import METRIC_SCALES, MISSING
from warehouse.paths import BenchPaths

pytestmark = pytest.mark.slow

SCORE = METRIC_SCALES["draco_score"]

# Every page a person reads numbers on. The lineage pages (item, QA, deep research) show the
# raw events and provider payloads by design and are left out.
TABLE_PAGES = (
    "overview",
    "scorecard",
    "extraction_leaderboard",
    "live_extraction",
    "runs",
    "item_browser",
    "qa_leaderboard",
    "qa_compare",
    "qa_series",
    "draco_leaderboard",
    "draco_criteria",
    "imports",
)


@pytest.fixture(scope="session")
def real_source(tmp_path_factory: pytest.TempPathFactory) -> RealSnapshot:
    return real_snapshot(tmp_path_factory)


@pytest.fixture
def real(bench_home: Path, real_source: RealSnapshot) -> Path:
    return install(real_source, bench_home)


def open_page(page: str, query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=TIMEOUT_S).run()
    at.switch_page(f"app_pages/{page}.py")
    if query:
        at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def chart_frames(element) -> list[pd.DataFrame]:
    return [
        pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all().to_pandas()
        for d in element.proto.datasets
    ]


def scorecard_draco(db: Path) -> dict:
    (row,) = snapshot_rows(
        db,
        "select run_id, regime, product, headline from marts.vendor_scorecard "
        "where family = 'deep_research' and rank_in_family = 1",
    ).to_dict(orient="records")
    return row


def test_a_draco_score_reads_the_same_in_table_chart_whatif_and_cli(
    real: Path, bench_home: Path
) -> None:
    card = scorecard_draco(real)
    board = snapshot_rows(
        real,
        "select lane, score_mean from marts.draco_leaderboard where run_id = ? and judge_id = ?",
        [card["run_id"], card["regime"]],
    )
    expected = {
        lane: 100 * score for lane, score in zip(board["lane"], board["score_mean"], strict=True)
    }
    points = expected[card["product"]]
    assert 1 < points <= 100

    at = open_page("draco_leaderboard", {"run": card["run_id"], "judge": card["regime"]})
    (table,) = [d.value for d in at.dataframe if {"System", "Score"} <= set(d.value.columns)]
    assert dict(zip(table["System"], table["Score"], strict=True)) == pytest.approx(expected)

    score_charts = [
        c
        for c in at.get("vega_lite_chart")
        if SCORE.axis_title in json.dumps(json.loads(c.proto.spec), ensure_ascii=False)
    ]
    assert len(score_charts) >= 2, "the CI chart and the cost chart plot the score"
    for chart in score_charts:
        plotted = {}
        for frame in chart_frames(chart):
            if {"lane", "score_mean"} <= set(frame.columns):
                plotted.update(zip(frame["lane"], frame["score_mean"], strict=True))
        assert plotted and plotted == pytest.approx({lane: expected[lane] for lane in plotted})

    (what_if,) = [d.value for d in at.dataframe if "Published score" in d.value.columns]
    assert dict(zip(what_if["System"], what_if["Published score"], strict=True)) == (
        pytest.approx(expected)
    )
    assert what_if["What-if score"].between(0, 100).all()

    proc = run_bench(bench_home, "scorecard", env={"COLUMNS": "200"})
    draco_block = proc.stdout.split("Deep research (DRACO)")[1].split("Extraction")[0]
    assert f" {SCORE.text(points / 100)} " in draco_block
    assert f" {points / 100:.3f} " not in draco_block


def test_no_table_cell_is_none_nan_or_json(real: Path) -> None:
    literal_none = set(
        snapshot_rows(
            real, "select distinct gold_answer from marts.fct_qa_answers where gold_answer = 'None'"
        )["gold_answer"]
    )  # a question whose gold answer is the word "None" is data, shown as it is

    def undefined(value) -> bool:
        if value is None or value is pd.NA or value is pd.NaT:
            return True
        return isinstance(value, float) and math.isnan(value)

    def bad_text(value) -> bool:
        if isinstance(value, dict | list):
            return True
        if not isinstance(value, str):
            return False
        text = value.strip()
        if text in ("nan", "NaN", "<NA>", "NaT", "null"):
            return True
        if text == "None" and text not in literal_none:
            return True
        return len(text) > 1 and text[0] in "{[" and text[-1] in "}]"

    found: dict[str, list] = {}
    for page in TABLE_PAGES:
        at = open_page(page)
        for index, element in enumerate(at.dataframe):
            frame = element.value
            # an undefined cell is drawn as the frame's placeholder: it must be MISSING ("—"),
            # not Streamlit's default grey "None"
            placeholder = element.proto.placeholder or "None"
            for column in frame.columns:
                values = frame[column].tolist()
                cells = [v for v in values if bad_text(v)]
                if placeholder != MISSING:
                    cells += [v for v in values if undefined(v)]
                if cells:
                    found.setdefault(page, []).append((index, column, cells[:2]))
    assert not found, found


def test_the_extraction_headline_is_the_top_row_of_the_ranking(real: Path) -> None:
    at = open_page("extraction_leaderboard")
    (table,) = [d.value for d in at.dataframe if {"Rank", "System"} <= set(d.value.columns)]
    top = table.iloc[0]
    assert top["Rank"] == table["Rank"].min()
    headline = next(t.value for t in at.text if " · rank " in t.value)
    assert headline.startswith(f"{top['System']} ")
    assert "rank 1 by the seed composite" in headline  # the ranking the table shows
    composite = next(m for m in at.metric if m.label == "Composite")
    assert composite.value == f"{float(top['Composite']):.3f}"
    # the composite carries its bootstrap interval, from the mart
    ((low, high),) = snapshot_rows(
        real,
        "select composite_ci_low, composite_ci_high from marts.extraction_leaderboard "
        "where system = ? and composite = ?",
        [top["System"], float(top["Composite"])],
    ).itertuples(index=False)
    assert low <= float(top["Composite"]) <= high and low < high
    assert headline.endswith(f"95 % CI {low:.3f}–{high:.3f}")
    assert top["CI (composite)"] == f"{low:.3f}–{high:.3f}"


def test_the_cli_summary_ranks_one_dataset_and_regime_per_table(
    real: Path, real_source: RealSnapshot
) -> None:
    from bench.run_report import headline_tables

    tables = headline_tables(BenchPaths(real.parent), None)
    console = Console(record=True, width=200)
    for table in tables:
        console.print(table)
    text = console.export_text()
    extraction = [t for t in tables if str(t.title).startswith("extraction leaderboard")]
    datasets = snapshot_rows(real, "select distinct dataset_name from marts.extraction_leaderboard")
    assert len(extraction) == len(datasets)
    assert all("· dataset " in str(t.title) for t in extraction)
    judges = snapshot_rows(
        real, "select distinct judge_id from marts.draco_leaderboard where run_id = ?",
        [real_source.draco_run],
    )  # fmt: skip
    draco = [t for t in tables if str(t.title).startswith("draco leaderboard")]
    assert len(draco) == len(judges) >= 2
    card = scorecard_draco(real)
    score = snapshot_rows(
        real,
        "select score_mean from marts.draco_leaderboard where run_id = ? and judge_id = ? "
        "and lane = ?",
        [card["run_id"], card["regime"], card["product"]],
    ).iloc[0, 0]
    assert f" {SCORE.text(score)} " in text and "None" not in text
    assert METRIC_SCALES["draco_score"].text(None) == MISSING
