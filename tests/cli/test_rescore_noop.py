"""`bench rescore` that changes nothing returns at once: no dbt build, no publish (issue #27, CLI:
`--weights ""` and the vars already in effect rebuilt and republished, ~7 s on the demo)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.bench_cli import BenchResult, run_bench

pytestmark = pytest.mark.slow

DEFAULT_WEIGHTS = "completeness=0.4,success=0.3,f1=0.2,latency=0.05,throughput=0.05"


def bench(home: Path, *args: str) -> BenchResult:
    return run_bench(home, *args, env={"COLUMNS": "200"})


def built_files(home: Path) -> dict[str, int]:
    """What a dbt build or a publish rewrites, with its mtime in ns."""
    names = ("warehouse.duckdb", "serve.duckdb", "warehouse.duckdb.built-through")
    return {name: (home / name).stat().st_mtime_ns for name in names if (home / name).exists()}


@pytest.fixture(scope="module")
def built_home(tmp_path_factory, shared_data) -> Path:
    home = tmp_path_factory.mktemp("rescore-noop") / "home"
    bench(home, "run", "extraction", "--engines", "html-text", "--limit", "2")
    assert (home / "serve.duckdb").is_file()
    return home


@pytest.fixture
def home(built_home, tmp_path) -> Path:
    """A copy of the built data root per test: a test's rescores never reach another's (no
    `bench rescore --reset` build to put the defaults back)."""
    shutil.copytree(built_home, tmp_path / "home")
    return tmp_path / "home"


@pytest.mark.parametrize(
    "args",
    [
        ["--weights", ""],
        ["--reset"],
        ["--weights", DEFAULT_WEIGHTS],  # the defaults spelled out
        [],
    ],
    ids=["empty-weights", "reset-at-defaults", "default-weights", "no-option"],
)
def test_a_rescore_at_the_defaults_runs_no_dbt(home, args):
    before = built_files(home)
    proc = bench(home, "rescore", *args)
    assert "nothing changed" in proc.stderr, proc.stderr
    assert "rescored" not in proc.stderr and "published" not in proc.stderr
    assert built_files(home) == before


def test_the_active_custom_vars_again_run_no_dbt_and_a_real_change_still_rebuilds(home):
    scoring = home / "scoring.json"
    first = bench(home, "rescore", "--threshold", "0.5", "--lane-prices", "brave_search=4")
    assert "rescored" in first.stderr and "useful_success_threshold" in first.stderr
    saved = json.loads(scoring.read_text())
    before = built_files(home)
    again = bench(home, "rescore", "--threshold", "0.5", "--lane-prices", "brave_search=4")
    assert "nothing changed" in again.stderr and "useful_success_threshold=0.5" in again.stderr
    assert built_files(home) == before
    assert json.loads(scoring.read_text()) == saved
    changed = bench(home, "rescore", "--threshold", "0.6")
    assert "rescored (useful_success_threshold=0.6)" in changed.stderr
    assert built_files(home)["serve.duckdb"] != before["serve.duckdb"]


def test_a_rescore_stopped_between_its_build_and_its_publish_is_published_by_the_same_command_again(
    home,
):
    """The window the sequence test found: the build accepted the vars (saved), the process died
    before publishing; the command again changes no var, and must still publish that build."""
    import duckdb

    from transform import pipeline
    from transform.dbt_build import rescore_selection
    from transform.state import save_scoring_vars
    from warehouse.paths import BenchPaths

    paths = BenchPaths(home)
    scoring = {"useful_success_threshold": 0.55}
    # what `bench rescore` does before it publishes
    selection = rescore_selection(paths, ["useful_success_threshold"])
    assert pipeline.build(paths, scoring_vars=scoring, select=selection)
    save_scoring_vars(paths, scoring)
    before = built_files(home)

    again = bench(home, "rescore", "--threshold", "0.55")
    assert "nothing changed" in again.stderr
    assert "published the last build" in again.stderr, again.stderr
    assert built_files(home)["serve.duckdb"] != before["serve.duckdb"]
    with duckdb.connect(str(paths.serve_db), read_only=True) as con:
        (metadata,) = con.execute("select metadata from main._publish").fetchone()
    assert json.loads(metadata)["scoring_vars"] == scoring

    settled = bench(home, "rescore", "--threshold", "0.55")  # now nothing is pending
    assert "published the last build" not in settled.stderr
