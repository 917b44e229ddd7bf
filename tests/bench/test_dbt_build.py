"""`bench build` orchestration (transform/dbt_build.py): unit tests apart, full refresh only when
the dbt project changed, the fingerprint kept beside the warehouse. dbt itself is not run."""

from __future__ import annotations

import duckdb
import pytest

from transform import build_selection, dbt_build, state
from warehouse.paths import BenchPaths


@pytest.fixture
def calls(monkeypatch):
    seen: list[list[str]] = []
    monkeypatch.setattr(dbt_build, "run_dbt", lambda paths, command, **kw: seen.append(command))
    return seen


def test_user_build_skips_unit_tests_and_refreshes_only_after_a_project_change(
    tmp_path, calls, monkeypatch
):
    paths = BenchPaths.from_env(tmp_path).ensure()
    dbt_build.dbt_build(paths)  # first build: no fingerprint yet
    dbt_build.dbt_build(paths)  # same project: incremental
    monkeypatch.setattr(dbt_build, "project_fingerprint", lambda: "edited")
    dbt_build.dbt_build(paths)  # the project changed: full refresh again
    dbt_build.dbt_build(paths)  # unchanged again: incremental
    # a correction event arrived: it can change rows no new event touches, so full refresh
    monkeypatch.setattr(dbt_build, "corrections_loaded", lambda db: 1)
    dbt_build.dbt_build(paths)
    dbt_build.dbt_build(paths)  # nothing new: incremental
    # another machine's copy of a loaded event replaced it (ingest/copies.py): full refresh
    monkeypatch.setattr(dbt_build, "copies_replaced", lambda db: 3)
    dbt_build.dbt_build(paths)
    assert all(c[:3] == ["build", "--exclude-resource-type", "unit_test"] for c in calls)
    assert ["--full-refresh" in c for c in calls] == [True, False, True, False, True, False, True]
    marker = state.fingerprint_file(paths.warehouse_db).read_text().strip()
    assert marker == "edited corrections=1 replaced=3"


def test_with_unit_tests_and_a_partial_refresh_leave_the_next_build_full(tmp_path, calls):
    paths = BenchPaths.from_env(tmp_path).ensure()
    duckdb.connect(str(paths.warehouse_db)).close()
    dbt_build.dbt_build(paths, select=["draco_leaderboard+"], with_unit_tests=True)
    assert calls[0][:4] == ["build", "--exclude-resource-type", "unit_test", "--select"]
    assert "--full-refresh" in calls[0]
    # the unit tests run on their own, after the build (without the active scoring vars)
    assert calls[1] == ["test", "--select", "test_type:unit"]
    # only some models were refreshed: the fingerprint is not recorded
    assert not state.fingerprint_file(paths.warehouse_db).exists()


def _raw_events(db, rows):
    with duckdb.connect(str(db)) as con:
        con.execute("create schema if not exists raw")
        con.execute(
            "create table if not exists raw.events (event_type varchar, _dlt_load_id varchar)"
        )
        con.executemany("insert into raw.events values (?, ?)", rows)


def _manifest():
    """The shape of dbt's manifest that the selection reads: stg_events's direct readers."""

    def node(name, **meta):
        return {"name": name, "resource_type": "model", "config": {"meta": meta}}

    nodes = {
        "model.bench.stg_events": node("stg_events"),
        "model.bench.stg_events__judge_verdict": node("stg_events__judge_verdict"),
        "model.bench.stg_events__page_fetched": node("stg_events__page_fetched"),
        "model.bench.dim_events": node("dim_events"),
        "model.bench.int_qa_runs": node("int_qa_runs", event_types=["run_started"]),
    }
    children = [uid for uid in nodes if uid != "model.bench.stg_events"]
    return {"nodes": nodes, "child_map": {"model.bench.stg_events": children}}


def test_a_build_runs_only_what_is_downstream_of_the_event_types_that_arrived(
    tmp_path, calls, monkeypatch
):
    paths = BenchPaths.from_env(tmp_path).ensure()
    monkeypatch.setattr(dbt_build, "load_manifest", lambda paths: _manifest())
    _raw_events(paths.warehouse_db, [("run_started", "1.0"), ("page_fetched", "1.0")])
    assert dbt_build.dbt_build(paths)  # first build: everything
    assert "--select" not in calls[-1]
    assert build_selection.read_cursor(paths.warehouse_db) == "1.0"

    assert dbt_build.dbt_build(paths) is False  # nothing arrived: dbt is not started
    assert len(calls) == 1

    _raw_events(paths.warehouse_db, [("judge_verdict", "2.0"), ("judge_verdict", "2.0")])
    assert dbt_build.dbt_build(paths)
    command = calls[-1]
    selection = command[command.index("--select") + 1 : command.index("--exclude")]
    # stg_events itself, the per-type model of the new type, and a reader of every type;
    # not page_fetched's model, nor a reader that declares it reads only run_started
    assert selection == ["stg_events", "stg_events__judge_verdict+", "dim_events+"]
    # the grain scans of the verdict-level tables are left to full builds and CI
    assert command[command.index("--exclude") + 1] == "tag:verdict_grain"
    assert build_selection.read_cursor(paths.warehouse_db) == "2.0"


def test_a_failed_build_keeps_the_cursor_so_the_next_one_retries_the_same_types(
    tmp_path, monkeypatch
):
    paths = BenchPaths.from_env(tmp_path).ensure()
    monkeypatch.setattr(dbt_build, "load_manifest", lambda paths: _manifest())
    _raw_events(paths.warehouse_db, [("run_started", "1.0")])
    monkeypatch.setattr(dbt_build, "run_dbt", lambda paths, command, **kw: None)
    dbt_build.dbt_build(paths)
    _raw_events(paths.warehouse_db, [("page_fetched", "2.0")])

    def fail(paths, command, **kw):
        raise dbt_build.DbtError("a model failed")

    monkeypatch.setattr(dbt_build, "run_dbt", fail)
    with pytest.raises(dbt_build.DbtError):
        dbt_build.dbt_build(paths)
    assert build_selection.read_cursor(paths.warehouse_db) == "1.0"


def test_fingerprint_follows_the_project_files(tmp_path):
    project = tmp_path / "dbt_project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: x\n")
    (project / "models" / "a.sql").write_text("select 1")
    before = dbt_build.project_fingerprint(project)
    assert dbt_build.project_fingerprint(project) == before
    (project / "models" / "a.sql").write_text("select 2")
    assert dbt_build.project_fingerprint(project) != before


def test_scoring_vars_reach_dbt_through_the_environment_except_beside_unit_tests(
    tmp_path, monkeypatch
):
    """The environment keeps dbt's partial parse; a command that runs unit tests gets --vars,
    which a unit test's own `overrides: vars` win over."""
    from transform import dbt_runner
    from transform.dbt_invoke import DbtResult

    seen = []

    def invoke(args, env, cwd, **options):
        seen.append((args, env))
        return DbtResult(success=True)

    monkeypatch.setattr(dbt_runner, "invoke_dbt", invoke)
    paths = BenchPaths.from_env(tmp_path).ensure()
    floor = {"draco_penalty_floor": -100}
    dbt_runner.run_dbt(paths, ["build", *dbt_build.NO_UNIT_TESTS], dbt_vars=floor)
    dbt_runner.run_dbt(paths, ["build", "--select", "x"], dbt_vars=floor)
    (no_units, no_units_env), (with_units, with_units_env) = seen
    assert "--vars" not in no_units
    assert no_units_env["BENCH_SCORING_VARS"] == '{"draco_penalty_floor": -100}'
    assert with_units[with_units.index("--vars") + 1] == '{"draco_penalty_floor": -100}'
    assert with_units_env["BENCH_SCORING_VARS"] == "{}"
