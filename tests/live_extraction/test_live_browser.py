"""The live-URL page's "by vertical" chart on the loopback run's real events: in AppTest it is
sent one row per (vertical, engine) of the mart, and in Debian chromium it draws one bar each
(and the page is screenshotted)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from tests.live_extraction.conftest import REPO_ROOT, publish_live

sys.path.insert(0, str(REPO_ROOT / "tests" / "app"))
from test_app_browser import CHROMIUM, RENDER_TIMEOUT_MS, guarded_page, running_app
from test_real_browser import COUNT_MARKS

pytestmark = pytest.mark.slow

PER_VERTICAL = (
    "select count(*) as n from marts.live_extraction_leaderboard "
    "where vertical <> 'all' and composite is not null"
)


def install(live_build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    publish_live(live_build, home)
    monkeypatch.setenv("BENCH_HOME", str(home))
    return home


def test_by_vertical_chart_has_one_bar_per_engine_and_vertical(live_build, tmp_path, monkeypatch):
    install(live_build, tmp_path, monkeypatch)
    (expected,) = live_build.rows(PER_VERTICAL)
    verticals = live_build.rows(
        "select count(distinct vertical) as n from marts.live_extraction_leaderboard "
        "where vertical <> 'all'"
    )[0]["n"]
    assert verticals >= 2  # the premise: the loopback corpus spans several verticals
    at = AppTest.from_file(str(REPO_ROOT / "app" / "streamlit_app.py"), default_timeout=60).run()
    at.switch_page("app_pages/live_extraction.py").run()
    assert not at.exception, [e.value for e in at.exception]
    (chart,) = at.get("vega_lite_chart")
    (dataset,) = chart.proto.datasets
    table = pa.ipc.open_stream(io.BytesIO(dataset.data.data)).read_all()
    assert table.num_rows == expected["n"]
    assert set(table.column("vertical").to_pylist()) == {
        r["vertical"]
        for r in live_build.rows(
            "select distinct vertical from marts.live_extraction_leaderboard where vertical <> 'all'"
        )
    }


@pytest.mark.browser
@pytest.mark.allow_hosts(["127.0.0.1"])
@pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing")
def test_live_page_renders_its_vertical_chart_in_chromium(live_build, tmp_path, monkeypatch):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    home = install(live_build, tmp_path, monkeypatch)
    (expected,) = live_build.rows(PER_VERTICAL)
    with (
        running_app(home, tmp_path / "streamlit.log") as url,
        guarded_page(tmp_path) as guarded,
    ):
        page = guarded.page
        page.goto(f"{url}/live_extraction")
        sync_api.expect(
            page.get_by_role("heading", name="Live-URL extraction").first
        ).to_be_visible(timeout=RENDER_TIMEOUT_MS)
        charts = page.locator('[data-testid="stVegaLiteChart"]')
        sync_api.expect(charts).to_have_count(1, timeout=RENDER_TIMEOUT_MS)
        page.wait_for_function(
            "() => [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')]"
            ".every(c => c.querySelector('svg g.role-mark'))",
            timeout=RENDER_TIMEOUT_MS,
        )
        assert page.locator('[data-testid="stException"]').count() == 0
        guarded.shoot("live_extraction")
        assert charts.nth(0).evaluate(COUNT_MARKS) == {"marks": expected["n"]}
        assert not guarded.dialogs and not guarded.offsite
