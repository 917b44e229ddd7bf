"""`bench build` orchestration (bench/dbt_build.py): unit tests apart, full refresh only when
the dbt project changed, the fingerprint kept beside the warehouse. dbt itself is not run."""

from __future__ import annotations

import pytest

from bench import dbt_build
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
    assert all(c[:3] == ["build", "--exclude-resource-type", "unit_test"] for c in calls)
    assert ["--full-refresh" in c for c in calls] == [True, False, True, False, True]
    marker = dbt_build.fingerprint_file(paths.warehouse_db).read_text().strip()
    assert marker == "edited corrections=1"


def test_with_unit_tests_and_a_partial_refresh_leave_the_next_build_full(tmp_path, calls):
    paths = BenchPaths.from_env(tmp_path).ensure()
    dbt_build.dbt_build(paths, select=["draco_leaderboard+"], with_unit_tests=True)
    assert calls[0][:3] == ["build", "--select", "draco_leaderboard+"]
    assert "--full-refresh" in calls[0]
    # only some models were refreshed: the fingerprint is not recorded
    assert not dbt_build.fingerprint_file(paths.warehouse_db).exists()


def test_fingerprint_follows_the_project_files(tmp_path):
    project = tmp_path / "dbt_project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: x\n")
    (project / "models" / "a.sql").write_text("select 1")
    before = dbt_build.project_fingerprint(project)
    assert dbt_build.project_fingerprint(project) == before
    (project / "models" / "a.sql").write_text("select 2")
    assert dbt_build.project_fingerprint(project) != before
