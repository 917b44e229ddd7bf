"""The live-URL page on marts dbt built from the loopback run's real events."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.live_extraction.conftest import REPO_ROOT, publish_live

pytestmark = pytest.mark.slow


def test_live_page_shows_leaderboard_hygiene_and_anchors(live_build, tmp_path, monkeypatch):
    home = tmp_path / "home"
    publish_live(live_build, home)
    monkeypatch.setenv("BENCH_HOME", str(home))
    at = AppTest.from_file(str(REPO_ROOT / "app" / "streamlit_app.py"), default_timeout=60).run()
    at.switch_page("app_pages/live_extraction.py").run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"dead": "2", "origin_5xx": "1", "redirect_only": "1"}
    board, hygiene, pages, anchors = (frame.value for frame in at.dataframe)
    assert len(board) == len(live_build.plan.systems)  # vertical 'all': one row per engine
    assert sorted(hygiene["url"]) == sorted(
        u for urls in live_build.site.expected_hygiene().values() for u in urls
    )
    assert len(pages) == len(live_build.plan.systems)
    assert not anchors.empty or pages["useful_success"].sum() == 0
    assert at.expander, "the raw events of the chosen engine are shown"
