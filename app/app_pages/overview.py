"""Home: what the serving snapshot holds, and where to go from here."""

from __future__ import annotations

import streamlit as st

from app import data, ui

st.title("Bench warehouse")
st.caption(
    "Every score below is derived by dbt from immutable events; drill from any leaderboard row "
    "down to the raw provider response it came from."
)

status = ui.require_snapshot()
st.text(f"Serving snapshot: {status.path}")
if status.published_at:
    st.text(f"Published at: {status.published_at}")

counts = data.overview_counts()
families = data.family_overview()
columns = st.columns(5)
columns[0].metric("Runs", counts["runs"])
columns[1].metric("Datasets", counts["datasets"])
columns[2].metric(
    "Families",
    len(families),
    help="Extraction, live-URL extraction, question answering, deep research, imported results.",
)
columns[3].metric("Scored pages", counts["pages"], help="Extraction pages (item × engine).")
columns[4].metric("Events", counts["events"])

st.subheader("By family")
ui.dataframe(
    families,
    hide_index=True,
    column_config={
        "family": "Family",
        "runs": "Runs",
        "systems": st.column_config.NumberColumn(
            "Systems", help="Engines, lanes or research systems."
        ),
        "items": st.column_config.NumberColumn("Items", help="Item × system pairs scored."),
        "not_completed": st.column_config.NumberColumn(
            "Not completed", help="Failed or missing pairs."
        ),
    },
)

st.subheader("Where to go")
present = set(families["family"])
st.page_link("app_pages/scorecard.py", label="Scorecard: who wins each family, at a glance")
st.page_link("app_pages/runs.py", label="Runs: spec, provenance and failures, every family")
if "extraction" in present or not present:
    st.page_link("app_pages/extraction_leaderboard.py", label="Extraction leaderboard")
    st.page_link("app_pages/item_lineage.py", label="Item lineage: score → events → raw output")
if "question answering" in present:
    st.page_link(
        "app_pages/qa_leaderboard.py", label="QA leaderboard (SimpleQA lanes, your questions)"
    )
    st.page_link("app_pages/qa_compare.py", label="QA lane vs lane")
    st.page_link("app_pages/qa_series.py", label="QA series: repeat runs and their noise band")
    st.page_link("app_pages/qa_lineage.py", label="QA lineage: answer → grade → search events")
if "live extraction" in present:
    st.page_link(
        "app_pages/live_extraction.py",
        label="Live-URL extraction: engines on live pages, anchors, hygiene",
    )
if data.draco_leaderboard_rows():
    st.page_link("app_pages/draco_leaderboard.py", label="Deep research (DRACO) leaderboard")
    st.page_link("app_pages/draco_criteria.py", label="Deep research criteria explorer")
    st.page_link(
        "app_pages/draco_lineage.py", label="Deep research lineage: score → verdicts → report"
    )
imported = data.imported_draco_leaderboard()
if "imported deep research" in present or (imported is not None and not imported.empty):
    st.page_link(
        "app_pages/imports.py",
        label="Imported results: published figures beside our recomputation and re-judging",
    )

st.subheader("Runs")
runs = data.list_runs()
ui.dataframe(
    runs,
    hide_index=True,
    column_config={
        "run_id": "Run",
        "benchmark": "Benchmark",
        "run_source": "Source",
        "dataset_name": "Dataset",
        "dataset_sha256": None,
        "status": "Status",
        "started_at": "Started",
        "finished_at": "Finished",
        "n_items_registered": "Items",
        "n_completed": "Completed",
        "n_failed": "Failed",
    },
)
