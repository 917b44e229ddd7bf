"""The deep-research (DRACO) pages in Debian chromium (Playwright), on loopback only.

Starts `streamlit run app/streamlit_app.py` on the DRACO snapshot built from real runner events
(`fixture_draco_snapshot`), renders the leaderboard (one table per judge regime) and the
criteria page, then deep-links the lineage page to the report whose raw output, normalised text,
citation title and an unparsed judge completion carry `<script>alert(..)</script>` and
`<img src=x onerror=alert(1)>`, and proves they stay inert text: no dialog, no injected <img>,
no script carrying the payload. Set BENCH_APP_SCREENSHOT_DIR to keep the screenshots.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from fixture_draco_snapshot import PLANTED_LANE, SCRIPT, DracoSnapshot, draco_snapshot, install
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


@pytest.fixture
def draco_app(
    bench_home: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, DracoSnapshot]]:
    snapshot = draco_snapshot(tmp_path_factory)
    install(snapshot, bench_home)
    with running_app(bench_home, tmp_path / "streamlit.log") as url:
        yield url, snapshot


def test_draco_pages_render_and_lineage_keeps_report_html_inert(
    draco_app: tuple[str, DracoSnapshot], tmp_path: Path
) -> None:
    app_url, snapshot = draco_app
    expect = sync_api.expect
    n = len(snapshot.judge_ids)
    with guarded_page(tmp_path, height=2400) as guarded:
        page = guarded.page
        page.goto(f"{app_url}/draco_leaderboard?{urlencode({'run': snapshot.run_id})}")
        expect(page.get_by_role("heading", name="Deep research leaderboard (DRACO)")).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        expect(page.get_by_role("heading", name=f"Judge regime {n} of {n}")).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        for judge_id in snapshot.judge_ids:
            expect(page.get_by_text(f"judge regime {judge_id} ·", exact=False).first).to_be_visible(
                timeout=RENDER_TIMEOUT_MS
            )
        # per regime: leaderboard, what-if (in its expander), domains and significance grids
        expect(page.locator('[data-testid="stDataFrame"]')).to_have_count(
            4 * len(snapshot.judge_ids), timeout=RENDER_TIMEOUT_MS
        )
        guarded.shoot("draco_leaderboard")

        page.goto(f"{app_url}/draco_criteria?{urlencode({'run': snapshot.run_id})}")
        expect(page.get_by_role("heading", name="Deep research criteria")).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        expect(page.locator('[data-testid="stDataFrame"]').nth(3)).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        guarded.shoot("draco_criteria")

        planted = {
            "run": snapshot.run_id,
            "judge": snapshot.judge_ids[2],
            "lane": PLANTED_LANE,
            "item": snapshot.planted_item_id,
        }
        page.goto(f"{app_url}/draco_lineage?{urlencode(planted)}")
        expect(page.get_by_role("heading", name="Deep research lineage")).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        code = page.locator('[data-testid="stCode"]').filter(has_text=SCRIPT)
        expect(code.first).to_be_visible(timeout=RENDER_TIMEOUT_MS)
        expect(code).to_have_count(2)  # the raw output and the normalised report, as text
        expect(
            page.locator('[data-testid="stCode"]').filter(has_text="<img src=x onerror=")
        ).to_have_count(2)
        expect(
            page.get_by_text(f"task {snapshot.planted_item_id}", exact=False).first
        ).to_be_visible()
        page.wait_for_timeout(800)  # give any injected handler a chance to fire

        guarded.assert_inert("alert(")
        guarded.shoot("draco_lineage")
