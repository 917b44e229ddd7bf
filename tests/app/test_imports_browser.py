"""Every page of the app in Debian chromium over the imports snapshot
(tests/app/fixture_imports_snapshot.py: imported DRACO results, our re-judging, the answer-lane
series): each renders and is screenshotted; the regime chart draws one bar per regime and the
series page one curve chart overall plus one per vertical."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_harness import snapshot_rows
from fixture_imports_snapshot import VERTICALS, ImportsSnapshot, imports_snapshot, install
from test_app_browser import CHROMIUM, guarded_page, running_app
from test_real_browser import PAGES, render

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)"
    ),
]

pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture(scope="session")
def imports_source(tmp_path_factory: pytest.TempPathFactory) -> ImportsSnapshot:
    return imports_snapshot(tmp_path_factory)


def test_every_page_renders_on_imported_results(
    imports_source: ImportsSnapshot, bench_home: Path, tmp_path: Path
) -> None:
    serve = install(imports_source, bench_home)
    regimes = snapshot_rows(
        serve,
        "select count(distinct (lane, imported_judge_id)) + count(distinct (lane, our_judge_id)) "
        "as n "
        "from marts.draco_regime_comparison",
    )["n"].iloc[0]
    expected_charts = {"imports": 1, "qa_series": 1 + len(VERTICALS)}
    with (
        running_app(bench_home, tmp_path / "streamlit.log") as url,
        guarded_page(tmp_path) as guarded,
    ):
        for path in PAGES:
            marks = render(guarded, url, path, expected_charts.get(path))
            if path == "imports":
                assert marks == [{"marks": int(regimes)}], marks
        assert not guarded.dialogs and not guarded.offsite
