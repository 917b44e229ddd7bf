"""dbt's price seeds are generated from the vendor modules (collectors.price_seeds): the committed
seeds hold the same data as the rendering, a vendor's price reaches its seed row, and the real
CLI reports a stale seed and rewrites it. No dbt build needed."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from collectors import price_seeds
from collectors.vendors import exa, firecrawl, parallel, tavily

REPO = Path(__file__).resolve().parents[2]


def rendered(name: str, key: str) -> dict[str, dict[str, str]]:
    rows = csv.DictReader(io.StringIO(price_seeds.render(name)))
    return {row[key]: row for row in rows}


@pytest.mark.parametrize("name", sorted(price_seeds.SEEDS))
def test_the_committed_seed_holds_the_rendered_prices(name):
    assert name not in price_seeds.stale_seeds(), (
        f"dbt_project/seeds/{name} differs from the vendor modules' prices: "
        "run `python -m collectors.price_seeds --write`"
    )


def test_a_vendor_price_is_the_seed_row_of_each_family():
    lanes = rendered("lane_prices.csv", "lane")
    assert float(lanes["exa_search_auto"]["usd_per_1k"]) == exa.SEARCH_USD_PER_1K
    assert float(lanes["exa_answer"]["usd_per_1k"]) == exa.ANSWER_USD_PER_1K
    assert lanes["exa_answer"]["price_snapshot_date"] == exa.ANSWER_PRICE_SNAPSHOT
    assert float(lanes["tavily_answer"]["usd_per_1k"]) == tavily.SEARCH_USD_PER_1K
    research = rendered("research_prices.csv", "lane")
    assert float(research["tavily_research_pro"]["usd_per_task"]) == pytest.approx(
        tavily.RESEARCH_USD_PER_TASK["pro"]
    )
    assert research["tavily_research_pro"]["basis"] == tavily.RESEARCH_PRICE_BASIS
    assert float(research["parallel_task_ultra"]["usd_per_task"]) == pytest.approx(
        parallel.TASK_USD_PER_1K["ultra"] / 1000
    )
    extraction = rendered("extraction_prices.csv", "system")
    assert float(extraction["firecrawl_scrape"]["usd_per_1k_requests"]) == (
        firecrawl.SCRAPE_USD_PER_1K
    )
    assert extraction["exa_contents"]["usd_per_1k_requests"] == ""  # no list price recorded


def test_seed_data_reads_prices_as_numbers_and_rows_in_any_order():
    a = "lane,provider,usd_per_1k,price_snapshot_date,basis\nx,p,5.00,2026-09-17,list\ny,q,,,\n"
    b = "lane,provider,usd_per_1k,price_snapshot_date,basis\ny,q,,,\nx,p,5.0,2026-09-17,list\n"
    assert price_seeds.seed_data(a) == price_seeds.seed_data(b)
    assert price_seeds.seed_data(a) != price_seeds.seed_data(a.replace("5.00", "5.01"))


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collectors.price_seeds", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_cli_names_a_stale_seed_then_rewrites_it(tmp_path):
    for name in price_seeds.SEEDS:
        (tmp_path / name).write_text(price_seeds.render(name), encoding="utf-8")
    seed = tmp_path / "lane_prices.csv"
    seed.write_text(
        seed.read_text().replace("exa_search_fast,exa,7.0,", "exa_search_fast,exa,6.0,")
    )

    checked = run_cli("--check", "--seeds-dir", str(tmp_path))
    assert checked.returncode == 1
    assert "lane_prices.csv" in checked.stderr and "research_prices" not in checked.stderr

    written = run_cli("--write", "--seeds-dir", str(tmp_path))
    assert written.returncode == 0 and "lane_prices.csv" in written.stdout
    assert seed.read_text() == price_seeds.render("lane_prices.csv")
    assert run_cli("--check", "--seeds-dir", str(tmp_path)).returncode == 0


def test_the_cli_writes_a_missing_seed(tmp_path):
    shutil.copy(price_seeds.SEEDS_DIR / "lane_prices.csv", tmp_path / "lane_prices.csv")
    assert run_cli("--check", "--seeds-dir", str(tmp_path)).returncode == 1
    assert run_cli("--write", "--seeds-dir", str(tmp_path)).returncode == 0
    assert (tmp_path / "extraction_prices.csv").read_text() == price_seeds.render(
        "extraction_prices.csv"
    )
