"""The QA pages in Debian chromium (Playwright), on loopback only.

Starts `streamlit run app/streamlit_app.py` on the app snapshot (tests/app/fixture_app_snapshot.py), renders the leaderboard,
lane-vs-lane, compare-runs (run 2 against run 1, wins recounted from the marts) and series pages, then deep-links the QA lineage page to the answer whose grader
completion and raw search body carry `<script>`/`<img onerror>` and proves both stay inert text.
Set BENCH_APP_SCREENSHOT_DIR to keep the screenshots.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from app_harness import snapshot_rows
from fixture_app_snapshot import AppSnapshot, install
from test_app_browser import CHROMIUM, RENDER_TIMEOUT_MS, guarded_page, running_app

pytestmark = [
    pytest.mark.slow,  # builds the real snapshot (dbt)
    pytest.mark.browser,
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)"
    ),
]

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture
def qa_app(
    bench_home: Path, tmp_path: Path, app_source: AppSnapshot
) -> Iterator[tuple[str, AppSnapshot]]:
    install(app_source, bench_home / "serve.duckdb")
    with running_app(bench_home, tmp_path / "streamlit.log") as url:
        yield url, app_source


def test_qa_pages_render_and_lineage_keeps_llm_html_inert(
    qa_app: tuple[str, AppSnapshot], tmp_path: Path
) -> None:
    app_url, fixture = qa_app
    expect = sync_api.expect
    with guarded_page(tmp_path, height=1800) as guarded:
        page = guarded.page
        run1 = fixture.qa_run_ids[0]
        page.goto(f"{app_url}/qa_leaderboard?{urlencode({'run': run1})}")
        expect(page.get_by_role("heading", name="QA leaderboard")).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        expect(page.get_by_text("Grader regime:", exact=False).first).to_be_visible()
        guarded.shoot("qa_leaderboard")

        compare = {"run": run1, "a": "brave_search", "b": fixture.baseline}
        page.goto(f"{app_url}/qa_compare?{urlencode(compare)}")
        expect(page.get_by_role("heading", name="Lane vs lane")).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        expect(page.locator('[data-testid="stMetricValue"]').first).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        expect(page.locator('[data-testid="stDataFrame"]').nth(1)).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        guarded.shoot("qa_compare")

        page.goto(f"{app_url}/qa_series")
        expect(page.get_by_role("heading", name="QA series")).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        expect(page.locator('[data-testid="stVegaLiteChart"]').first).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        page.wait_for_timeout(500)  # let the chart finish drawing
        guarded.shoot("qa_series")

        # Compare runs: the same lane in run 2 against run 1, wins recounted from the marts.
        run2 = fixture.qa_run_ids[1]
        grader = fixture.grader_id
        labels = snapshot_rows(
            fixture.serve_db,
            "select run_id, item_id, landed, label from marts.fct_qa_answers "
            "where lane = 'brave_search' and (grader_id = ? or grader_id is null)",
            [grader],
        )
        by_run = {
            run: {r.item_id: (bool(r.landed), r.label == "correct") for r in rows.itertuples()}
            for run, rows in labels.groupby("run_id")
        }
        paired = [
            (by_run[run2][i][1], by_run[run1][i][1])
            for i in by_run[run2]
            if i in by_run[run1] and by_run[run2][i][0] and by_run[run1][i][0]
        ]
        sides = {"family": "qa", "a": f"{run2}|brave_search|{grader}"}
        sides["b"] = f"{run1}|brave_search|{grader}"
        page.goto(f"{app_url}/run_compare?{urlencode(sides)}")
        expect(page.get_by_role("heading", name="Compare runs")).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        wins = page.locator('[data-testid="stMetric"]').filter(has_text="A wins")
        expect(wins.locator('[data-testid="stMetricValue"]')).to_have_text(
            str(sum(a and not b for a, b in paired)), timeout=RENDER_TIMEOUT_MS
        )
        losses = page.locator('[data-testid="stMetric"]').filter(has_text="B wins")
        expect(losses.locator('[data-testid="stMetricValue"]')).to_have_text(
            str(sum(b and not a for a, b in paired))
        )
        expect(page.get_by_role("heading", name="The paired test")).to_be_visible()
        expect(page.locator('[data-testid="stDataFrame"]').nth(1)).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        guarded.shoot("run_compare")

        page.goto(f"{app_url}/qa_lineage?{urlencode(fixture.qa_malicious)}")
        expect(page.get_by_role("heading", name="QA lineage")).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        planted = page.locator('[data-testid="stCode"]').filter(
            has_text="<script>document.title='pwned'</script>"
        )
        expect(planted.first).to_be_visible(timeout=RENDER_TIMEOUT_MS)
        expect(planted).to_have_count(2)  # grader completion and raw search body, as text
        expect(
            page.get_by_text(f"item {fixture.qa_malicious['item']}", exact=False).first
        ).to_be_visible()
        page.wait_for_timeout(500)  # give any injected handler a chance to fire

        assert "pwned" not in page.title()
        guarded.assert_inert("pwned")
        guarded.shoot("qa_lineage")
        page.get_by_text("Raw completion", exact=False).first.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        guarded.shoot("qa_lineage_grader")
