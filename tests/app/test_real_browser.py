"""Every page of the app in Debian chromium over the real-events snapshot
(tests/app/fixture_real_snapshot.py): each renders without an exception box, is screenshotted,
and each chart page draws its charts with the right number of marks.

Marks are counted in the rendered SVG (app/charts.py asks vega-embed for SVG): one bar per
row of the mart rows a chart plots, which the test reads from the snapshot with plain DuckDB.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_harness import snapshot_rows
from fixture_real_snapshot import RealSnapshot, install, real_snapshot
from test_app_browser import CHROMIUM, RENDER_TIMEOUT_MS, guarded_page, running_app

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)"
    ),
]

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

# url path -> heading; every page of app/streamlit_app.py, plus the /overview alias
PAGES = {
    "": "Bench warehouse",
    "overview": "Bench warehouse",
    "scorecard": "Scorecard: who wins, at a glance",
    "extraction_leaderboard": "Extraction leaderboard",
    "runs": "Runs",
    "item_browser": "Item browser",
    "item_lineage": "Item lineage",
    "run_compare": "Compare runs",
    "qa_leaderboard": "QA leaderboard",
    "qa_compare": "Lane vs lane",
    "qa_series": "QA series",
    "qa_lineage": "QA lineage",
    "draco_leaderboard": "Deep research leaderboard",
    "draco_criteria": "Deep research criteria",
    "draco_lineage": "Deep research lineage",
    "live_extraction": "Live-URL extraction",
    "imports": "Imported results",
}

# Marks drawn per chart, per Vega mark group: our charts are SVG (app/charts.py), so each mark
# is an element; groups are named "marks" (one layer) or "layer_<i>_marks".
COUNT_MARKS = """
el => {
  const counts = {};
  for (const group of el.querySelectorAll('svg g.role-mark')) {
    const name = [...group.classList].find(c => c.endsWith('marks'));
    if (name) counts[name] = (counts[name] || 0) + group.children.length;
  }
  return counts;
}
"""


def render(guarded, url: str, path: str, n_charts: int | None = None) -> list[dict[str, int]]:
    """Open one page, wait until its script run is over and every chart has drawn its SVG,
    check there is no exception box and no "Page not found", screenshot it; the marks per
    chart (COUNT_MARKS), in page order."""
    expect = sync_api.expect
    page = guarded.page
    page.goto(f"{url}/{path}")
    expect(page.get_by_role("heading", name=PAGES[path]).first).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    if n_charts:
        expect(charts).to_have_count(n_charts, timeout=RENDER_TIMEOUT_MS)
    # the script run is over: no "Running" widget and no skeleton placeholder left
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " && !document.querySelector('[data-testid=\"stSkeleton\"]')",
        timeout=RENDER_TIMEOUT_MS,
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')]"
        ".every(c => c.querySelector('svg g.role-mark'))",
        timeout=RENDER_TIMEOUT_MS,
    )
    assert page.locator('[data-testid="stException"]').count() == 0, path
    assert page.get_by_text("Page not found").count() == 0, path
    guarded.shoot(path or "home")
    marks = [charts.nth(i).evaluate(COUNT_MARKS) for i in range(charts.count())]
    assert all(m and sum(m.values()) > 0 for m in marks), (path, marks)
    return marks


@pytest.fixture(scope="session")
def real_source(tmp_path_factory: pytest.TempPathFactory) -> RealSnapshot:
    return real_snapshot(tmp_path_factory)


def test_every_page_renders_and_its_charts_draw(
    real_source: RealSnapshot, bench_home: Path, tmp_path: Path
) -> None:
    serve = install(real_source, bench_home)
    n_engines = len(snapshot_rows(serve, "select system from marts.extraction_leaderboard"))
    n_lanes = len(snapshot_rows(serve, "select distinct lane from marts.qa_leaderboard"))
    # QA: accuracy CI, latency, cost (local lanes have a price of 0); DRACO per regime: CI,
    # cost, heatmap — at least those of the first regime
    expected_charts = {"extraction_leaderboard": 2, "qa_leaderboard": 3}
    with (
        running_app(bench_home, tmp_path / "streamlit.log") as url,
        guarded_page(tmp_path) as guarded,
    ):
        for path in PAGES:
            marks = render(guarded, url, path, expected_charts.get(path))
            if path == "extraction_leaderboard":
                # shingle F1 ± std: one bar per engine (layer 0); p95 latency: one bar per engine
                assert marks[0]["layer_0_marks"] == n_engines, marks
                assert marks[1]["marks"] == n_engines, marks
            if path == "qa_leaderboard":
                assert marks[0]["layer_0_marks"] == n_lanes, marks
        assert not guarded.dialogs and not guarded.offsite
