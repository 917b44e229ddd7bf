"""Entry point: `streamlit run app/streamlit_app.py` from the repo root, with BENCH_HOME set.

Pages live in `app/app_pages/`, registered here through `st.navigation` (not the legacy
`pages/` folder). Each page reads the serving snapshot through `app.data` only.
"""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Bench warehouse", layout="wide")

PAGES = [
    # The default page is served at "/" whatever its url_path, so "/overview" (what the menu's
    # title suggests, and what links use) gets a hidden alias of the same script.
    st.Page("app_pages/overview.py", title="Overview", url_path="home", default=True),
    st.Page("app_pages/overview.py", title="Overview", url_path="overview", visibility="hidden"),
    st.Page("app_pages/scorecard.py", title="Scorecard: who wins", url_path="scorecard"),
    st.Page(
        "app_pages/extraction_leaderboard.py",
        title="Extraction leaderboard",
        url_path="extraction_leaderboard",
    ),
    st.Page(
        "app_pages/live_extraction.py", title="Live-URL extraction", url_path="live_extraction"
    ),
    st.Page("app_pages/runs.py", title="Runs", url_path="runs"),
    st.Page("app_pages/item_browser.py", title="Item browser", url_path="item_browser"),
    st.Page("app_pages/item_lineage.py", title="Item lineage", url_path="item_lineage"),
    st.Page("app_pages/run_compare.py", title="Compare runs", url_path="run_compare"),
    st.Page("app_pages/qa_leaderboard.py", title="QA leaderboard", url_path="qa_leaderboard"),
    st.Page("app_pages/qa_compare.py", title="QA lane vs lane", url_path="qa_compare"),
    st.Page("app_pages/qa_series.py", title="QA series", url_path="qa_series"),
    st.Page("app_pages/qa_lineage.py", title="QA lineage", url_path="qa_lineage"),
    st.Page(
        "app_pages/draco_leaderboard.py",
        title="Deep research leaderboard",
        url_path="draco_leaderboard",
    ),
    st.Page(
        "app_pages/draco_criteria.py", title="Deep research criteria", url_path="draco_criteria"
    ),
    st.Page("app_pages/draco_lineage.py", title="Deep research lineage", url_path="draco_lineage"),
    st.Page("app_pages/imports.py", title="Imported results", url_path="imports"),
]

from app.data import log_verification_warning  # noqa: E402 - after set_page_config

if warning := log_verification_warning():
    st.error(warning, icon="⚠️")

st.navigation(PAGES).run()
