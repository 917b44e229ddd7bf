"""The app on marts dbt built from real events (tests/app/fixture_real_snapshot.py): every
family on Overview and Runs, readable leaderboards with their charts, and what-if panels that
equal a real dbt rescore.

Expected values are read from the snapshot with plain DuckDB (or from a dbt build), never
through app.data.
"""

from __future__ import annotations

import io
import json
import shlex
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pytest
from app_harness import APP_SCRIPT, TIMEOUT_S, snapshot_rows
from fixture_real_snapshot import RealSnapshot, install, real_snapshot
from streamlit.testing.v1 import AppTest

from app import whatif
from tests.bench_cli import run_bench
from transform.dbt_build import NO_UNIT_TESTS
from transform.dbt_runner import run_dbt
from warehouse.paths import BenchPaths

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def real_source(tmp_path_factory: pytest.TempPathFactory) -> RealSnapshot:
    return real_snapshot(tmp_path_factory)


@pytest.fixture
def real(bench_home: Path, real_source: RealSnapshot) -> Path:
    return install(real_source, bench_home)


def open_page(page: str) -> AppTest:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=TIMEOUT_S)
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def chart_rows(element) -> list[int]:
    """Rows of each dataset a Vega-Lite chart was sent: one mark per row for our charts."""
    sizes = []
    for dataset in element.proto.datasets:
        table = pa.ipc.open_stream(io.BytesIO(dataset.data.data)).read_all()
        sizes.append(table.num_rows)
    return sizes


def chart_marks(element) -> list[str]:
    spec = json.loads(element.proto.spec)
    layers = spec.get("layer", [spec])
    return [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        for layer in layers
    ]


def _copy_warehouse(source: RealSnapshot, tmp_path: Path) -> BenchPaths:
    """A data root holding a copy of the fixture's warehouse, where bench keeps it. Same file
    name: DuckDB names the catalog after it, and the staging views refer to it; and inside the
    root, so dbt sees the connection settings of every bench build and reuses the saved parse
    (transform/dbt_parse_cache.py)."""
    paths = BenchPaths(tmp_path / "rescore-home").ensure()
    assert paths.warehouse_db.name == source.warehouse_db.name
    shutil.copyfile(source.warehouse_db, paths.warehouse_db)
    return paths


def rescored_leaderboard(source: RealSnapshot, tmp_path: Path, dbt_vars: dict) -> pd.DataFrame:
    """`bench rescore`'s dbt half on a copy of the fixture's warehouse (its build: no unit tests,
    the vars through the environment)."""
    paths = _copy_warehouse(source, tmp_path)
    run_dbt(
        paths, ["build", *NO_UNIT_TESTS, "--select", "extraction_leaderboard"], dbt_vars=dbt_vars
    )
    with duckdb.connect(str(paths.warehouse_db), read_only=True) as con:
        return con.execute("select * from marts.extraction_leaderboard").df()


# --- overview and runs ---------------------------------------------------------------------------


def test_overview_counts_every_family_and_links_their_pages(real: Path) -> None:
    at = open_page("overview")
    families = at.dataframe[0].value.set_index("family")
    expected = snapshot_rows(
        real,
        "select 'question answering' as family, count(distinct lane) as systems, "
        "count(distinct (lane, item_id)) as items from marts.fct_qa_answers "
        "union all select 'deep research', count(distinct lane), count(distinct (lane, item_id)) "
        "from marts.fct_draco_items "
        "union all select 'extraction', count(distinct system), count(*) from marts.fct_extraction_pages",
    ).set_index("family")
    assert set(families.index) == set(expected.index)
    for family, row in expected.iterrows():
        assert families.loc[family, "systems"] == row["systems"], family
        assert families.loc[family, "items"] == row["items"], family
    links = {link.proto.label for link in at.get("page_link")}
    assert "QA leaderboard (SimpleQA lanes, your questions)" in links
    assert "Deep research (DRACO) leaderboard" in links


def test_overview_has_a_url_of_its_own() -> None:
    text = APP_SCRIPT.read_text()
    assert 'url_path="overview", visibility="hidden"' in text  # /overview is not "Page not found"


def test_runs_page_counts_qa_and_draco_runs(real: Path) -> None:
    runs = snapshot_rows(real, "select run_id, benchmark from marts.dim_runs")
    at = open_page("runs")
    for run in runs.itertuples():
        at.selectbox[0].set_value(run.run_id).run()
        assert not at.exception
        metrics = {m.label: m.value for m in at.metric}
        per_system = at.dataframe[0].value
        if run.benchmark == "qa":
            expected = snapshot_rows(
                real,
                "select lane, count(distinct item_id) as n from marts.fct_qa_answers "
                "where run_id = ? group by lane order by lane",
                [run.run_id],
            )
        elif run.benchmark == "rubric":
            expected = snapshot_rows(
                real,
                "select lane, count(distinct item_id) as n from marts.fct_draco_items "
                "where run_id = ? group by lane order by lane",
                [run.run_id],
            )
        else:
            expected = snapshot_rows(
                real,
                "select system as lane, count(*) as n from marts.fct_extraction_pages "
                "where run_id = ? group by system order by system",
                [run.run_id],
            )
        assert per_system["system"].tolist() == expected["lane"].tolist(), run.benchmark
        assert per_system["n_items"].tolist() == expected["n"].tolist()
        assert metrics["Systems"] == str(len(expected)) and int(metrics["Systems"]) > 0
        assert metrics["Items"] == str(int(expected["n"].max()))


# --- extraction leaderboard ----------------------------------------------------------------------


def demo_dataset(at: AppTest, real: Path) -> str:
    sha = snapshot_rows(real, "select distinct dataset_sha256 from marts.extraction_leaderboard")
    (only,) = sha["dataset_sha256"].tolist()
    at.selectbox[0].set_value(only).run()
    return only


def test_extraction_leaderboard_shows_the_boilerplate_the_seed_composite_misses(real: Path) -> None:
    at = open_page("extraction_leaderboard")
    demo_dataset(at, real)
    board = snapshot_rows(
        real, "select * from marts.extraction_leaderboard order by rank_composite, system"
    )
    table = at.dataframe[0].value
    assert table.columns[:3].tolist() == ["Rank", "System", "Lineage"]
    assert table["System"].tolist() == board["system"].tolist()
    assert table["Extra text"].tolist() == pytest.approx((1 - board["shingle_precision"]).tolist())
    first_by_seed = board.sort_values(["rank_seed_composite", "system"]).iloc[0]
    assert (
        first_by_seed["shingle_precision"] < 0.9
    )  # the fixture's premise: a boilerplate keeper wins
    (callout,) = [i.value.replace("\\", "") for i in at.info]
    assert f"ranks {first_by_seed['system']} first" in callout
    assert "shingle precision" in callout
    assert all("None" not in str(v) for v in table["Tie"])


def test_extraction_charts_have_one_mark_per_system(real: Path) -> None:
    at = open_page("extraction_leaderboard")
    demo_dataset(at, real)
    n = len(snapshot_rows(real, "select system from marts.extraction_leaderboard"))
    ci_chart, latency_chart = at.get("vega_lite_chart")
    assert chart_marks(ci_chart) == ["bar", "errorbar"]
    assert chart_rows(ci_chart) == [n]
    assert chart_marks(latency_chart) == ["bar"]
    assert chart_rows(latency_chart) == [n]


def test_extraction_whatif_equals_a_dbt_rescore(
    real: Path, real_source: RealSnapshot, tmp_path: Path
) -> None:
    weights = {"completeness": 0.3, "success": 0.2, "f1": 0.1, "shingle_f1": 0.4}
    at = open_page("extraction_leaderboard")
    demo_dataset(at, real)
    for slider in at.slider:
        name = slider.key.removeprefix("whatif_")
        slider.set_value(weights.get(name, 0.0))
    at.run()
    assert not at.exception
    panel = next(d.value for d in at.dataframe if "What-if rank" in d.value.columns)
    command = at.code[0].value
    assert command == "bench rescore --weights completeness=0.3,success=0.2,f1=0.1,shingle_f1=0.4"

    rescored = rescored_leaderboard(real_source, tmp_path, {"extraction_weights": weights})
    rescored = rescored.sort_values(["rank_composite", "system"]).reset_index(drop=True)
    assert panel["System"].tolist() == rescored["system"].tolist()
    assert panel["What-if composite"].tolist() == pytest.approx(
        rescored["composite"].tolist(), abs=1e-12
    )
    assert panel["What-if rank"].tolist() == rescored["rank_composite"].tolist()
    # and the ranking did change: shingle F1 moved the main-content engines up
    assert panel["Published rank"].tolist() != panel["What-if rank"].tolist()


def test_the_whatif_runs_the_snapshots_formula_and_an_old_snapshot_still_renders(
    real: Path,
) -> None:
    """The panel states no formula of its own: change the published one and the panel follows.
    A snapshot published before dim_scoring_formulas existed asks for a build, and the rest of
    the page (the charts below the panel) still renders."""
    with duckdb.connect(str(real)) as con:
        con.execute(
            "update marts.dim_scoring_formulas set sql_text = '0.5 + 0 * board.completeness' "
            "where formula = 'extraction_composite'"
        )
    at = open_page("extraction_leaderboard")
    demo_dataset(at, real)
    panel = next(d.value for d in at.dataframe if "What-if rank" in d.value.columns)
    assert set(panel["What-if composite"]) == {0.5}

    with duckdb.connect(str(real)) as con:
        con.execute("drop table marts.dim_scoring_formulas")
    at = open_page("extraction_leaderboard")
    demo_dataset(at, real)
    assert not at.exception
    assert any("run `bench build`" in i.value for i in at.info)
    assert not any("What-if rank" in d.value.columns for d in at.dataframe)
    assert len(at.get("vega_lite_chart")) == 2  # the charts after the panel


# --- QA and deep research leaderboards ------------------------------------------------------------


def test_qa_leaderboard_rank_first_human_names_and_charts(real: Path) -> None:
    at = open_page("qa_leaderboard")
    board = snapshot_rows(
        real, "select * from marts.qa_leaderboard order by strict_accuracy desc, lane"
    )
    table = at.dataframe[0].value
    assert (
        table["Rank"].tolist()
        == board["strict_accuracy"].rank(method="min", ascending=False).astype(int).tolist()
    )
    charts = at.get("vega_lite_chart")
    assert len(charts) >= 2
    assert chart_marks(charts[0]) == ["bar", "errorbar"] and chart_rows(charts[0]) == [len(board)]
    # p50 and p95 per lane: one bar each where the mart has a value
    latencies = board[["latency_p50_ms", "latency_p95_ms"]].notna().sum().sum()
    assert chart_rows(charts[1]) == [int(latencies)]


def frame_with(at: AppTest, column: str) -> pd.DataFrame:
    """The one dataframe on the page that has `column`."""
    (frame,) = [d.value for d in at.dataframe if column in d.value.columns]
    return frame


def bench_rescore(source: RealSnapshot, tmp_path: Path, command: str) -> Path:
    """Run the panel's `bench rescore ...` on a copy of the fixture's home; its new snapshot."""
    home = tmp_path / "rescore-home"
    shutil.copytree(source.home, home)
    args = shlex.split(command)
    assert args[:2] == ["bench", "rescore"], command
    run_bench(None, *args[1:], "--home", str(home))
    return home / "serve.duckdb"


def test_qa_whatif_threshold_and_price_equal_a_bench_rescore(
    real: Path, real_source: RealSnapshot, tmp_path: Path
) -> None:
    published = snapshot_rows(real, "select * from marts.qa_leaderboard").set_index("lane")
    at = open_page("qa_leaderboard")
    # the published view first: the panel recomputes the published figures
    panel = frame_with(at, "what_if_rank").set_index("lane")
    for column in ("llm_hit_10", "llm_precision_10", "usd_per_1k", "run_cost_usd"):
        assert panel[column].to_dict() == pytest.approx(
            published[column].to_dict(), abs=1e-12, nan_ok=True
        ), column
    assert not at.code  # nothing changed, no command

    at.slider(key="qa_whatif_threshold").set_value(3)
    at.number_input(key="qa_whatif_price_local-bm25").set_value(2.5)
    at.selectbox(key="qa_whatif_rank_by").set_value("llm_precision_10")
    at.run()
    assert not at.exception
    command = at.code[0].value
    assert command == "bench rescore --umbrela-threshold 3 --lane-prices local-bm25=2.5"
    panel = frame_with(at, "what_if_rank")

    rescored = snapshot_rows(
        bench_rescore(real_source, tmp_path, command), "select * from marts.qa_leaderboard"
    ).set_index("lane")
    by_lane = panel.set_index("lane")
    for column in ("llm_hit_10", "llm_precision_10", "usd_per_1k", "run_cost_usd"):
        assert by_lane[column].to_dict() == pytest.approx(
            rescored[column].to_dict(), abs=1e-12, nan_ok=True
        ), column
    # the threshold did change the relevance figures, and the rank follows the chosen metric
    moved = by_lane["llm_precision_10"].sub(published["llm_precision_10"]).abs()
    assert (moved > 1e-9).any()
    ranked = panel.dropna(subset=["llm_precision_10"])
    assert ranked["llm_precision_10"].is_monotonic_decreasing
    assert panel["what_if_rank"].iloc[0] == 1


@pytest.mark.parametrize(
    "outdated",
    [
        "drop table marts.fct_qa_graded_chunks",
        "delete from marts.dim_scoring_formulas where formula like 'umbrela%'",
    ],
)
def test_qa_whatif_on_a_snapshot_before_its_rows_or_formulas_asks_for_a_build(
    real: Path, outdated: str
) -> None:
    """A snapshot published before fct_qa_graded_chunks or the QA formulas existed: the panel
    asks for `bench build`, and the rest of the page (significance below the panel) renders."""
    with duckdb.connect(str(real)) as con:
        con.execute(outdated)
    at = open_page("qa_leaderboard")
    assert any("run `bench build`" in i.value for i in at.info)
    assert not any("what_if_rank" in d.value.columns for d in at.dataframe)
    assert "Per question" in [s.value for s in at.subheader]  # the page's last section


def test_draco_whatif_penalty_floor_equals_a_dbt_rescore(
    real: Path, real_source: RealSnapshot, tmp_path: Path
) -> None:
    floor = -5
    judges = snapshot_rows(real, "select distinct judge_id from marts.draco_leaderboard order by 1")
    with duckdb.connect(str(real), read_only=True) as con:
        items = con.execute("select * from marts.fct_draco_items").df()
        criteria = con.execute("select * from marts.fct_draco_criteria").df()
        formulas = dict(
            con.execute("select formula, sql_text from marts.dim_scoring_formulas").fetchall()
        )
    # the fixture's premise: some penalty is MET, so the floor matters
    assert ((criteria["registered_weight"] < floor) & (criteria["v"] > 0)).any()

    paths = _copy_warehouse(real_source, tmp_path)
    run_dbt(  # of bench rescore's int_draco_criteria_weighted+, the path to the mart read below
        paths,
        ["build", *NO_UNIT_TESTS, "--select", "int_draco_criteria_weighted+,+draco_leaderboard"],
        dbt_vars={"draco_penalty_floor": floor},
    )
    with duckdb.connect(str(paths.warehouse_db), read_only=True) as con:
        floored = con.execute("select lane, judge_id, score_mean from marts.draco_leaderboard").df()

    changed = False
    for judge_id in judges["judge_id"]:
        mine = items[items["judge_id"] == judge_id]
        crit = criteria[criteria["judge_id"] == judge_id]
        published = whatif.draco_lane_scores(mine, crit, None, formulas).set_index("lane")[
            "what_if_score"
        ]
        board = snapshot_rows(
            real,
            "select lane, score_mean from marts.draco_leaderboard where judge_id = ?",
            [judge_id],
        ).set_index("lane")["score_mean"]
        assert published.to_dict() == pytest.approx(board.to_dict(), abs=1e-12)  # same formula
        what_if = whatif.draco_lane_scores(mine, crit, floor, formulas).set_index("lane")[
            "what_if_score"
        ]
        dbt = floored[floored["judge_id"] == judge_id].set_index("lane")["score_mean"]
        assert what_if.to_dict() == pytest.approx(dbt.to_dict(), abs=1e-12)
        changed |= any(abs(what_if[k] - board[k]) > 1e-9 for k in board.index)
    assert changed

    at = open_page("draco_leaderboard")
    at.toggle[0].set_value(True).run()
    at.slider[0].set_value(floor).run()
    assert not at.exception
    assert at.code[0].value == f"bench rescore --draco-penalty-floor {floor}"
    heatmaps = [c for c in at.get("vega_lite_chart") if chart_marks(c) == ["rect"]]
    per_judge = snapshot_rows(
        real, "select judge_id, count(*) as n from marts.fct_draco_domains group by judge_id"
    )
    assert heatmaps and chart_rows(heatmaps[0])[0] in set(per_judge["n"])
