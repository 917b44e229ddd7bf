"""After a run: dbt reports each node as it starts, and the summary shows each system's headline
figure read from the published marts (real events, real dbt build)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.run_report import headline_tables
from tests.cli.test_cli_help import _bench
from transform import pipeline
from warehouse.paths import BenchPaths

pytestmark = pytest.mark.slow


def test_build_progress_and_headlines_from_a_real_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run = _bench(
        "run",
        "extraction",
        "--corpus",
        "demo",
        "--engines",
        "trafilatura,inscriptis",
        "--limit",
        "4",
        "--no-score",
        home=home,
    )
    assert run.returncode == 0, run.stderr
    paths = BenchPaths.from_env(home).ensure()
    pipeline.ingest(paths)
    calls: list[tuple[int, int, str]] = []
    pipeline.build(paths, on_progress=lambda i, n, node: calls.append((i, n, node)))
    pipeline.publish(paths)

    totals = {n for _, n, _ in calls}
    assert len(totals) == 1 and totals.pop() > 50  # one build, every model/test/seed counted
    assert [i for i, _, _ in calls] == list(range(1, len(calls) + 1))
    assert "extraction_leaderboard" in {node for _, _, node in calls}

    (table,) = [t for t in headline_tables(paths, None) if "extraction" in str(t.title)]
    headers = [column.header for column in table.columns]
    # ranked by the composite the leaderboard page ranks by (the active weights), one dataset
    assert headers[:6] == [
        "extraction engine",
        "composite (active weights)",
        "95% CI low",
        "high",
        "seed composite",
        "shingle F1",
    ]
    assert "· dataset " in str(table.title)
    engines = list(table.columns[0].cells)
    assert sorted(engines) == ["inscriptis", "trafilatura"]
    composites = [float(v) for v in table.columns[1].cells]
    assert composites == sorted(composites, reverse=True) and all(0 < v <= 1 for v in composites)
    assert headline_tables(paths, ["no-such-run"]) == []
