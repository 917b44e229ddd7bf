"""`bench rescore --lane-prices`: a lane nobody can run or import is refused, not stored.

The known lanes are the lane registry's (collectors.qa.lane_registry.available_lanes(), the same
names as the lane_prices seed) plus the lanes only the warehouse holds (an imported file's lane).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb

from bench.settings import DBT_PROJECT_DIR
from collectors.qa.lane_registry import available_lanes
from tests.cli.test_cli_help import _bench
from warehouse.paths import BenchPaths


def _saved_vars(home: Path) -> dict:
    path = BenchPaths.from_env(home).scoring_file
    return json.loads(path.read_text()) if path.exists() else {}


def test_unknown_lane_is_refused_with_the_known_names(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = _bench("rescore", "--lane-prices", "brave_search=4,nosuchlane=3", home=home)
    assert result.returncode == 2, result.stdout + result.stderr
    message = " ".join(result.stderr.split())
    assert "--lane-prices: unknown lane nosuchlane;" in message
    for lane in ("closed-book", "local-bm25", "brave_search", "exa_answer"):
        assert lane in message
    assert "Traceback" not in result.stderr
    assert _saved_vars(home) == {}  # nothing stored, not even the known lane's price


def test_the_registry_and_the_seed_name_the_same_lanes() -> None:
    """One list of lanes: a seed row for a lane the registry lacks (or the reverse) would make
    a priced lane unpriceable here."""
    with (DBT_PROJECT_DIR / "seeds" / "lane_prices.csv").open() as seed:
        seeded = {row["lane"] for row in csv.DictReader(seed)}
    assert seeded == set(available_lanes())


def test_known_and_imported_lanes_are_accepted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    # A warehouse whose QA mart holds an imported file's lane (`bench import qa-results --lane
    # vendor_x`); the log is empty, so rescore saves the vars for the next build.
    with duckdb.connect(str(BenchPaths.from_env(home).warehouse_db)) as con:
        con.execute("create schema marts")
        con.execute("create table marts.qa_leaderboard as select 'vendor_x' as lane")
    ok = _bench("rescore", "--lane-prices", "brave_search=4.5,vendor_x=2", home=home)
    assert ok.returncode == 0, ok.stderr
    assert _saved_vars(home)["lane_price_overrides"] == {"brave_search": 4.5, "vendor_x": 2.0}
    refused = _bench("rescore", "--lane-prices", "vendor_y=1", home=home)
    assert refused.returncode == 2 and "vendor_x" in " ".join(refused.stderr.split())
