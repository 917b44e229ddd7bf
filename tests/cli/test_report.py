"""`bench report --out DIR` on a snapshot dbt built from real events
(tests/app/fixture_real_snapshot.py: what `bench demo` runs, smaller), through the real CLI.

Every number of every CSV is held against the mart it came from, by a query written here
(the mart is the CSV's folder, the row keys are listed below, not taken from the report);
index.html links every CSV and carries the log head `main._publish` records; Debian chromium
opens the site from file:// with no console error, no request beyond the page itself, and the
scorecard's winners on it.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

from bench.report import figures
from tests.bench_cli import BenchResult, run_bench

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "tests" / "app"))
from fixture_real_snapshot import RealSnapshot, install, real_snapshot  # noqa: E402

# The natural key of each mart a report CSV may come from (docs/warehouse-contract.md).
ROW_KEYS = {
    "vendor_scorecard": ("family", "product"),
    "qa_leaderboard": ("run_id", "lane", "grader_id"),
    "draco_leaderboard": ("run_id", "lane", "judge_id"),
    "extraction_leaderboard": ("run_id", "system"),
    "live_extraction_leaderboard": ("run_id", "system", "vertical"),
    "dim_scoring_vars": ("var_name",),
}
# Leaderboards whose every row must be in the report.
COMPLETE = ("vendor_scorecard", "qa_leaderboard", "draco_leaderboard", "extraction_leaderboard")


@pytest.fixture(scope="session")
def real_source(tmp_path_factory: pytest.TempPathFactory) -> RealSnapshot:
    return real_snapshot(tmp_path_factory)


@pytest.fixture
def home(tmp_path: Path, real_source: RealSnapshot) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    install(real_source, home)
    return home


def bench(*args: str) -> BenchResult:
    return run_bench(None, *args, cwd=REPO_ROOT, check=False)


def build_report(home: Path, out: Path) -> str:
    result = bench("report", "--out", str(out), "--home", str(home))
    assert result.returncode == 0, result.stderr
    return result.stdout


def count_rows(db: Path, mart: str) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(f"select count(*) from marts.{mart}").fetchone()[0]


def csvs_against_marts(out: Path, db: Path) -> tuple[dict[str, int], int]:
    """Every value of every CSV of the report in `out` against its mart's row, found by the
    mart's key; ({mart: rows in CSVs}, values compared)."""
    seen: dict[str, int] = {}
    compared = 0
    with duckdb.connect(str(db), read_only=True) as con:
        for path in sorted(out.rglob("*.csv")):
            mart = path.parent.name
            keys = ROW_KEYS[mart]
            with path.open(encoding="utf-8", newline="") as handle:
                rows = list(csv.DictReader(handle))
            assert rows, path
            columns = list(rows[0])
            for row in rows:
                where = " and ".join(f"{k} is not distinct from ?" for k in keys)
                found = con.execute(
                    f"select {', '.join(columns)} from marts.{mart} where {where}",
                    [row[k] or None for k in keys],
                ).fetchall()
                assert len(found) == 1, (mart, {k: row[k] for k in keys})
                for column, value in zip(columns, found[0], strict=True):
                    assert same(row[column], value), (mart, column, row[column], value)
                    compared += 1
            seen[mart] = seen.get(mart, 0) + len(rows)
    return seen, compared


def families_in_page_order(rows: list[tuple]) -> list[tuple]:
    order = ["qa_search", "qa_answer", "deep_research", "extraction", "live_extraction"]
    return sorted(rows, key=lambda row: order.index(row[0]))


def same(text: str, value) -> bool:
    if value is None:
        return text == ""
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, float):
        return float(text) == value
    if isinstance(value, int):
        return int(text) == value
    return text == str(value)


@pytest.mark.slow
def test_every_csv_number_is_its_marts_and_the_index_links_each_csv_and_the_log_head(
    home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    stdout = build_report(home, out)
    assert "file://" in stdout and "index.html" in stdout

    index = (out / "index.html").read_text(encoding="utf-8")
    linked = set(re.findall(r'href="(data/[^"]+\.csv)"', index))
    on_disk = {p.relative_to(out).as_posix() for p in (out / "data").rglob("*.csv")}
    assert linked == on_disk and on_disk

    db = home / "serve.duckdb"
    with duckdb.connect(str(db), read_only=True) as con:
        metadata = json.loads(
            con.execute(
                "select metadata from main._publish order by published_at desc limit 1"
            ).fetchone()[0]
        )
        head = metadata["log_head"]
        assert f"{head['size']}:{head['root']}" in index

        # Each scorecard family links the leaderboard figure of its run and regime.
        links = re.findall(r'class="leaderboard" href="#([^"]+)"', index)
        families = con.execute(
            "select distinct family, run_id, regime from marts.vendor_scorecard"
        ).fetchall()
        assert len(links) == len(families)
        headings = dict(re.findall(r'<h3 id="([^"]+)">([^<]*)</h3>', index))
        for (family, run_id, regime), anchor in zip(
            families_in_page_order(families), links, strict=True
        ):
            heading = headings[anchor]
            assert run_id in heading or f"Dataset {regime}" in heading, (family, heading)
            if family in ("qa_search", "qa_answer", "deep_research"):
                assert f"regime {regime}" in heading, (family, heading)

    seen, compared = csvs_against_marts(out, db)
    for mart in COMPLETE:
        assert seen.get(mart, 0) == count_rows(db, mart) > 0, mart
    assert compared > 200


@pytest.mark.slow
def test_refuses_without_a_snapshot_or_into_a_non_empty_dir(home: Path, tmp_path: Path) -> None:
    empty_home = tmp_path / "empty-home"
    empty_home.mkdir()
    result = bench("report", "--out", str(tmp_path / "a"), "--home", str(empty_home))
    assert result.returncode == 2
    assert "nothing is published yet" in result.stderr
    assert not (tmp_path / "a").exists()

    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    result = bench("report", "--out", str(busy), "--home", str(home))
    assert result.returncode == 2
    assert "--force" in result.stderr
    assert [p.name for p in busy.iterdir()] == ["notes.txt"]

    build_report_forced = bench("report", "--out", str(busy), "--home", str(home), "--force")
    assert build_report_forced.returncode == 0, build_report_forced.stderr
    assert (busy / "index.html").exists() and (busy / "notes.txt").read_text() == "mine"
    # A previous report's file the new one does not write is removed; the user's stays.
    stale = busy / "data" / "qa_leaderboard" / "stale.csv"
    manifest = json.loads((busy / "report.json").read_text())
    stale.write_text("old")
    manifest["files"].append("data/qa_leaderboard/stale.csv")
    (busy / "report.json").write_text(json.dumps(manifest))
    again = bench("report", "--out", str(busy), "--home", str(home), "--force")
    assert again.returncode == 0, again.stderr
    assert not stale.exists() and (busy / "notes.txt").exists()


@pytest.mark.slow
@pytest.mark.browser
def test_the_site_renders_from_file_with_no_request_and_shows_the_winners(
    home: Path, tmp_path: Path
) -> None:
    from test_app_browser import CHROMIUM, CHROMIUM_ARGS

    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    out = tmp_path / "site"
    build_report(home, out)
    index = out / "index.html"
    assert "<script" not in index.read_text(encoding="utf-8")

    with duckdb.connect(str(home / "serve.duckdb"), read_only=True) as con:
        winners = con.execute(
            "select family, winner from marts.vendor_scorecard where is_winner"
        ).fetchall()
        (n_bars,) = con.execute(
            "select count(*) from marts.vendor_scorecard where headline is not null"
        ).fetchone()
    assert winners

    errors: list[str] = []
    requests: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(index.as_uri())
            page.wait_for_load_state("load")
            verdicts = page.locator("#scorecard .verdict").all_inner_texts()
            bars = page.locator("#scorecard svg.chart rect.bar").count()
            charts = page.locator("svg.chart").count()
            heading = page.locator("h1").inner_text()
        finally:
            browser.close()

    assert errors == []
    assert requests == [index.as_uri()]
    assert heading == "Benchmark report"
    assert len(verdicts) == len(winners)
    for family, winner in winners:
        assert any(v.startswith(f"{winner} ") for v in verdicts), (family, winner, verdicts)
    assert bars == n_bars  # one bar per scorecard row that has a headline
    assert charts >= len(winners)


def test_every_column_the_report_shows_is_in_its_marts_contract() -> None:
    """The report's column lists against the marts' yml contracts: a renamed mart column fails
    here, not in a user's report (live extraction included, which the real snapshot lacks)."""
    declared: dict[str, set[str]] = {}
    for path in (REPO_ROOT / "dbt_project" / "models" / "marts").rglob("*.yml"):
        for model in yaml.safe_load(path.read_text(encoding="utf-8")).get("models") or []:
            declared[model["name"]] = {column["name"] for column in model.get("columns", [])}
    for board in figures.BOARDS:
        shown = {*board.names, *board.group_by, *board.row_key, board.bar_label}
        shown |= {c.value for c in board.charts} | {c.spread for c in board.charts if c.spread}
        shown |= {name for c in board.charts for name in (c.ci or ())}
        assert shown <= set(board.names), board.key  # everything used is in the one list
        assert set(board.names) <= declared[board.mart], (board.mart, shown - declared[board.mart])
    scorecard = {c.name for c in figures.SCORECARD_TABLE}
    assert scorecard <= declared[figures.SCORECARD_MART]
