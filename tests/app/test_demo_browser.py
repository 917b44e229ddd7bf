"""After `bench demo`, no page of the app is an empty state (issue #27: the demo shows what the
app is for): every page of the chromium sweep (test_real_browser.PAGES) renders over the demo's
own data root, and none of its notices says there is nothing to show.

The data root is built by the real CLI, `bench demo --no-serve --no-reference` (the reference
engines need the shared benchmark on disk, which CI may not have; they feed no page that the
demo's own corpus does not). Empty states are the app's notices (ui.stop_with, the require_*
guards and the sections' "No … rows" lines, all `st.info`); EMPTY_STATE matches their texts and
every notice of every kind is checked.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from test_app_browser import CHROMIUM, guarded_page, running_app
from test_real_browser import PAGES, render

from tests.demo_home import demo_home as shared_demo_home

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)"
    ),
]

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

# What the app says when a page or a section has nothing to show (app/ui.py, app/app_pages/*).
EMPTY_STATE = re.compile(
    r"^(No |The snapshot has no|This \w+ has (no|fewer)|That \w+ has no|This file publishes no"
    r"|Pick two different)"
)
INFO_NOTICES = (
    "() => [...document.querySelectorAll('[data-testid^=\"stAlertContent\"]')]"
    ".map(e => e.innerText.trim())"
)


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_demo_home(tmp_path_factory)  # shared with the lake tests (tests/demo_home.py)


def test_the_empty_state_pattern_matches_the_apps_empty_states() -> None:
    # The pattern must bite: these are the app's own empty-state texts, and a normal note is not.
    for text in (
        "No criterion has disagreeing samples under these filters.",
        "The snapshot has no imported DRACO results yet. Import a results file",
        "The snapshot has no QA run that belongs to a series. Start one with",
        "This run has fewer than two lanes with answers: nothing to compare.",
        "This file publishes no header figures (e.g. Nimble or CSV results).",
        "No live-URL run in the snapshot yet.",
    ):
        assert EMPTY_STATE.match(text), text
    assert not EMPTY_STATE.match("Notes: scores are DRACO scores x 100")


def test_the_demo_imports_the_docs_example_file(demo_home: Path) -> None:
    from collectors.demo.draco_tasks import DEMO_IMPORT_FILE

    docs = Path(__file__).resolve().parents[2] / "docs" / "examples" / DEMO_IMPORT_FILE
    assert (demo_home / "cache" / "demo" / DEMO_IMPORT_FILE).read_bytes() == docs.read_bytes()


def test_no_page_is_empty_after_the_demo(demo_home: Path, tmp_path: Path) -> None:
    empty: dict[str, list[str]] = {}
    with (
        running_app(demo_home, tmp_path / "streamlit.log") as url,
        guarded_page(tmp_path) as guarded,
    ):
        for path in PAGES:
            render(guarded, url, path)
            notices = guarded.page.evaluate(INFO_NOTICES)
            hits = [text for text in notices if EMPTY_STATE.match(text)]
            if hits:
                empty[path or "home"] = hits
        assert not guarded.dialogs and not guarded.offsite
    assert not empty, empty


def test_the_demo_prices_its_qa_lanes_as_labelled_demo_prices(demo_home: Path) -> None:
    """The offline QA lanes cost nothing; the demo gives them made-up prices so the cost views
    have a shape, labelled "demo price" as DRACO's offline systems are, not stored as a user's
    `--lane-prices` override that every later rescore would carry along."""
    import duckdb

    from collectors.qa.lanes import DEMO_PRICE_PER_1K_USD
    from transform.state import load_scoring_vars
    from warehouse.paths import BenchPaths

    with duckdb.connect(str(demo_home / "serve.duckdb"), read_only=True) as con:
        rows = con.execute(
            "select distinct lane, usd_per_1k, price_basis from marts.qa_leaderboard"
        ).fetchall()
    assert {lane for lane, _, _ in rows} == set(DEMO_PRICE_PER_1K_USD)
    for lane, usd, basis in rows:
        assert (usd, basis) == (DEMO_PRICE_PER_1K_USD[lane], "demo price"), lane
    assert not load_scoring_vars(BenchPaths(demo_home)).get("lane_price_overrides")


def test_the_item_browser_of_the_demos_live_run_equals_its_mart_and_links_to_each_url(
    demo_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Live-URL extraction is a family of the item browser: the matrix holds the URLs hygiene
    kept, one cell per engine, recounted from marts.fct_live_extraction_pages; each cell opens
    that URL and engine on the live-URL page."""
    import duckdb
    from streamlit.testing.v1 import AppTest

    app_script = Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py"
    with duckdb.connect(str(demo_home / "serve.duckdb"), read_only=True) as con:
        cursor = con.execute(
            "select run_id, item_id, url, system, outcome, useful_success, "
            "coalesce(token_f1, 0.0) as f1, excluded from marts.fct_live_extraction_pages"
        )
        names = [d[0] for d in cursor.description]
        pages = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    kept = [p for p in pages if not p["excluded"]]
    assert len({p["run_id"] for p in pages}) == 1  # the demo's one live run
    assert kept and len(kept) < len(pages)  # hygiene set some URLs aside
    monkeypatch.setenv("BENCH_HOME", str(demo_home))

    at = AppTest.from_file(str(app_script), default_timeout=60).run()
    at.switch_page("app_pages/item_browser.py")
    at.query_params["family"] = "live"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    frame = next(d.value for d in at.dataframe if "URL" in d.value.columns)
    engines = sorted({p["system"] for p in kept})
    # live URLs keep no dataset position, so no "#" column of blanks
    assert list(frame.columns) == ["URL", *engines, "Mean token F1"]
    # hygiene's exclusions are not scored, so not in the matrix; every kept URL is, once
    assert sorted(frame["URL"]) == sorted({p["url"] for p in kept})
    for page in kept:
        cell = frame.loc[frame["URL"] == page["url"], page["system"]].iloc[0]
        link, _, text = cell.partition("#")
        path, _, query = link.partition("?")
        assert path == "/live_extraction"
        assert dict(parse_qsl(query)) == {
            "run": page["run_id"], "system": page["system"], "item": page["item_id"]
        }  # fmt: skip
        if page["outcome"] != "extracted":  # live outcomes: extracted | failed
            assert text == page["outcome"]
        else:
            mark = "" if page["useful_success"] else " · not useful"
            assert text == f"{page['f1']:.3f}{mark}"

    # following a cell opens that URL and that engine on the live-URL page
    page = next(p for p in kept if p["outcome"] == "extracted")
    live = AppTest.from_file(str(app_script), default_timeout=60).run()
    live.switch_page("app_pages/live_extraction.py")
    live.query_params.update(
        {"run": page["run_id"], "item": page["item_id"], "system": page["system"]}
    )
    live.run()
    assert not live.exception, [e.value for e in live.exception]
    url_box = next(s for s in live.selectbox if s.label == "URL")
    assert url_box.value == page["item_id"]
    assert url_box.format_func(url_box.value) == page["url"]
    engine_box = next(s for s in live.selectbox if s.label == "Raw events of engine")
    assert engine_box.value == page["system"]
    shown = next(d.value for d in live.dataframe if "extraction_event_id" in d.value.columns)
    assert set(shown["system"]) == {p["system"] for p in pages if p["item_id"] == page["item_id"]}
