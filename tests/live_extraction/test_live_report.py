"""`bench report` over the live-URL marts the loopback run built (tests/live_extraction/conftest.py):
one figure per (run, vertical), every CSV value equal to marts.live_extraction_leaderboard, and
a snapshot without the scorecard and the other families' marts still reported (each says so)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.bench_cli import run_bench
from tests.cli.test_report import count_rows, csvs_against_marts
from tests.live_extraction.conftest import REPO_ROOT, run_dbt
from warehouse.publish import publish_snapshot

pytestmark = pytest.mark.slow


def test_live_extraction_figures_equal_the_mart(live_build, tmp_path: Path) -> None:
    work = tmp_path / "build"
    (work / "dbt").mkdir(parents=True)
    warehouse = work / "warehouse.duckdb"
    shutil.copyfile(live_build.db_path, warehouse)
    # The report orders runs by dim_runs.started_at, as the app does; the live build has
    # only the live marts.
    result = run_dbt(["run", "--select", "+dim_runs"], warehouse, work)
    assert result.returncode == 0, result.stdout[-3000:]
    home = tmp_path / "home"
    home.mkdir()
    head = live_build.log.head(live_build.log.manifest_records())
    publish_snapshot(warehouse, home / "serve.duckdb", {"log_head": head.to_json()})

    out = tmp_path / "site"
    run_bench(None, "report", "--out", str(out), "--home", str(home), cwd=REPO_ROOT)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert str(head) in index
    assert "no marts.vendor_scorecard" in index and "no marts.qa_leaderboard" in index

    serve = home / "serve.duckdb"
    seen, _ = csvs_against_marts(out, serve)
    total = count_rows(serve, "live_extraction_leaderboard")
    assert seen == {"live_extraction_leaderboard": total} and total > 0
    verticals = {
        row["vertical"]
        for row in live_build.rows(
            "select distinct vertical from marts.live_extraction_leaderboard"
        )
    }
    figures = re.findall(r'<h3 id="live_extraction-[^"]+">([^<]*)</h3>', index)
    assert len(figures) == len(verticals)
    for vertical in verticals:  # one figure per vertical of the one run
        assert sum(f.endswith(f"· Vertical {vertical}") for f in figures) == 1, figures
    assert json.loads((out / "report.json").read_text())["log_head"] == str(head)
