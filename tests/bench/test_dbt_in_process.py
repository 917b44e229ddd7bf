"""dbt runs in bench's own process (transform/dbt_invoke.py). What that must not cost: the file
lock (another process opens the warehouse read-write right after), the caller's environment and
working directory, the manifest bench reads beside each root, and dbt's errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from transform import dbt_invoke
from transform.dbt_runner import DbtError, run_dbt
from warehouse.paths import BenchPaths

SEED = ["seed", "--select", "lane_prices"]


def _root(tmp_path: Path, name: str) -> BenchPaths:
    paths = BenchPaths.from_env(tmp_path / name)
    paths.ensure()
    return paths


def _open_read_write_elsewhere(db: Path) -> str:
    """A second process opening the file for writing: refused while anything holds its lock."""
    code = "import duckdb,sys; c=duckdb.connect(sys.argv[1]); print(c.execute('select count(*) from intermediate.lane_prices').fetchone()[0])"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(db)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_the_warehouse_is_free_for_another_process_after_each_call(tmp_path):
    paths = _root(tmp_path, "root")
    run_dbt(paths, SEED)
    rows = _open_read_write_elsewhere(paths.warehouse_db)
    assert int(rows) > 0
    run_dbt(paths, SEED)  # and the next call in this process opens it again
    assert _open_read_write_elsewhere(paths.warehouse_db) == rows


def test_the_callers_environment_and_directory_are_restored(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_TEST_MARKER", "kept")
    monkeypatch.chdir(tmp_path)
    before = dict(os.environ)
    run_dbt(_root(tmp_path, "root"), SEED)
    assert dict(os.environ) == before
    assert Path.cwd() == tmp_path


def test_a_second_root_reuses_the_parse_and_still_gets_its_manifest(tmp_path):
    """The parsed project is kept per process; a root that never parsed still finds
    target/manifest.json (build selection and rescore lineage read it)."""
    first, second = _root(tmp_path, "a"), _root(tmp_path, "b")
    run_dbt(first, SEED)
    kept = dict(dbt_invoke._kept_manifests)
    assert kept, "the first call keeps the parsed project"
    run_dbt(second, SEED)
    assert dbt_invoke._kept_manifests == kept  # no second parse
    assert (second.dbt_dir / "target" / "manifest.json").exists()
    assert not (second.dbt_dir / "target" / "partial_parse.msgpack").exists()


def test_a_failing_model_raises_with_dbts_own_error(tmp_path):
    """No raw.events in an empty warehouse: the staging model fails, and DuckDB's message
    reaches the caller (bench prints it), not only "failed"."""
    paths = _root(tmp_path, "root")
    with pytest.raises(DbtError) as failed:
        run_dbt(paths, ["run", "--select", "stg_events"])
    assert "events" in str(failed.value) and "does not exist" in str(failed.value)
    # the failure released the file too
    run_dbt(paths, SEED)
    assert int(_open_read_write_elsewhere(paths.warehouse_db)) > 0


def test_progress_reports_every_node_started(tmp_path):
    seen: list[tuple[int, int, str]] = []
    run_dbt(
        _root(tmp_path, "root"),
        ["seed", "--select", "lane_prices", "research_prices"],
        on_progress=lambda i, n, name: seen.append((i, n, name)),
    )
    assert sorted(seen) == [(1, 2, seen[0][2]), (2, 2, seen[1][2])]
    assert {name for _, _, name in seen} == {"lane_prices", "research_prices"}


def test_a_credential_in_bench_argv_never_reaches_dbts_artifacts(tmp_path, monkeypatch):
    """dbt records its invocation from sys.argv; in bench's process that is bench's command
    line, which may carry a gateway URL with credentials (issue: secrets never persist)."""
    secret = "sk-canary-argv-0123456789abcdef"
    monkeypatch.setattr(sys, "argv", ["bench", "run", "qa", f"--synthesizer=http://u:{secret}@h"])
    paths = _root(tmp_path, "root")
    run_dbt(paths, SEED)
    assert sys.argv[-1].endswith(f"{secret}@h")  # the caller's argv is back
    written = [
        p for p in paths.dbt_dir.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()
    ]
    assert written == []
