"""A lake with a local catalog file (one machine, BENCH_WAREHOUSE=ducklake:<file>): dlt loads the
demo's log into it and dbt builds on it with the same models. The whole scenario, every mart
included, runs on the team's form of the lake (tests/lake/test_lake_team.py); this checks the
local catalog's own path, kept short since DDL on a catalog file costs 60-100 ms a statement
(docs/stack-notes.md): the events, and dim_runs with everything it is built from."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ingest.pipeline import staging_schema
from tests.bench_cli import run_bench
from tests.demo_home import demo_home
from tests.lake.marts import mart_differences
from transform.dbt_runner import run_dbt
from warehouse.lake import LakeError, builder_lock, lake_target, open_warehouse
from warehouse.paths import BenchPaths

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def local_lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], int]:
    """The demo's home, the lake's settings, and the rows left in this loader's staging
    dataset on the lake after the load (ingest/copies.py compares, then clears them)."""
    demo = demo_home(tmp_path_factory)
    root = tmp_path_factory.mktemp("local-lake")
    shutil.copytree(demo / "log", root / "log")
    env = {
        "BENCH_WAREHOUSE": f"ducklake:{root / 'lake' / 'catalog.ducklake'}",
        "BENCH_LAKE_DATA": str(root / "lake" / "data"),
    }
    (root / "lake").mkdir()
    run_bench(root, "ingest", env=env)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        with open_warehouse(Path("unused"), read_only=True) as con:
            staging = staging_schema(BenchPaths(root).dlt_dir)
            (staged,) = con.execute(f"select count(*) from {staging}.events").fetchone()
        # cautious: only the data tests whose every parent is built here
        run_dbt(
            BenchPaths(root), ["build", "--select", "+dim_runs", "--indirect-selection", "cautious"]
        )
    return demo, env, staged


def test_the_events_and_a_mart_on_a_local_catalog_equal_the_local_build(
    local_lake, monkeypatch
) -> None:
    demo, env, staged = local_lake
    assert staged == 0  # the staging dataset dlt loaded through, found and cleared
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert lake_target() is not None and lake_target().is_local
    with open_warehouse(Path("unused"), read_only=True) as con:
        con.execute(f"attach '{demo / 'warehouse.duckdb'}' as loc (read_only)")
        events = "select event_id, event_type, payload from {}.raw.events order by event_id"
        lake_events = con.execute(events.format("warehouse")).fetchall()
        assert lake_events == con.execute(events.format("loc")).fetchall()
        assert len(lake_events) > 1000
        assert mart_differences(con, "warehouse", "loc", ["dim_runs"]) == {}
        (runs,) = con.execute("select count(*) from warehouse.marts.dim_runs").fetchone()
        assert runs > 3


def test_a_second_builder_of_a_local_lake_is_refused_naming_the_first(local_lake, tmp_path):
    _, env, _ = local_lake
    holder = "bench pid 4242 on this machine"
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        with builder_lock(lake_target(), holder), pytest.raises(LakeError) as refused:
            run_dbt(BenchPaths(tmp_path), ["run", "--select", "dim_runs"])
    assert f"is being built by {holder}: one builder at a time" in str(refused.value)
