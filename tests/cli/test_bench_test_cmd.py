"""`bench test` for real: every dbt unit test of the project, run by dbt against a warehouse the
real pipeline built (the session's fixture warehouse, copied), counted from the yml files."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.cli.test_cli_help import _bench

MODELS = Path(__file__).resolve().parents[2] / "dbt_project" / "models"


def unit_tests_in_the_project() -> int:
    """The yml's own count, read without dbt: one entry per rule under `unit_tests:`."""
    return sum(
        len((yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("unit_tests") or [])
        for path in MODELS.rglob("*.yml")
    )


@pytest.mark.slow
def test_bench_test_runs_every_unit_test_and_passes(fixture_warehouse, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(fixture_warehouse.path, home / "warehouse.duckdb")
    proc = _bench("test", "--home", str(home))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    printed = proc.stdout + proc.stderr  # bench's console is stderr
    summary = re.search(r"PASS=(\d+) WARN=(\d+) ERROR=(\d+) SKIP=(\d+)", printed)
    assert summary, printed[-2000:]
    expected = unit_tests_in_the_project()
    assert expected > 40
    assert tuple(map(int, summary.groups())) == (expected, 0, 0, 0)


def test_bench_test_without_a_warehouse_says_to_build_first(tmp_path):
    proc = _bench("test", "--home", str(tmp_path / "empty"))
    assert proc.returncode != 0
    assert "run `bench build` first" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
