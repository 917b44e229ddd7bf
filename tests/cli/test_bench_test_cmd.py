"""`bench test` for real: every dbt unit test of the project, run by dbt against a warehouse the
real pipeline built (the session's fixture warehouse, copied), counted from the yml files. This
is CI's one run of the unit tests (scripts/test); builds elsewhere leave them out, as a user's
`bench build` does."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.bench_cli import run_bench

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
    result = run_bench(home, "test", "--home", str(home), check=False)
    assert result.returncode == 0, result.output[-3000:]
    printed = result.output
    summary = re.search(r"PASS=(\d+) WARN=(\d+) ERROR=(\d+) SKIP=(\d+)", printed)
    assert summary, printed[-2000:]
    expected = unit_tests_in_the_project()
    assert expected > 40
    assert tuple(map(int, summary.groups())) == (expected, 0, 0, 0)


def test_bench_test_without_a_warehouse_says_to_build_first(tmp_path):
    result = run_bench(tmp_path / "empty", "test", "--home", str(tmp_path / "empty"), check=False)
    assert result.returncode != 0
    assert "run `bench build` first" in result.output
    assert "Traceback" not in result.stderr
