"""Runs: the frozen spec, provenance, counts, and every item that did not complete."""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app import data, ui

st.title("Runs")
ui.require_snapshot()

runs = data.list_runs()
if runs.empty:
    ui.stop_with("The snapshot has no runs yet. Run `bench demo`, then reload this page.")

run_labels = {
    row.run_id: " · ".join(
        [row.run_id, ui.text_or_missing(row.dataset_name), ui.text_or_missing(row.status)]
    )
    for row in runs.itertuples()
}
run_ids = list(run_labels)
wanted = st.query_params.get("run")
run_id = st.selectbox(
    "Run",
    run_ids,
    index=run_ids.index(wanted) if wanted in run_labels else 0,
    format_func=lambda r: run_labels.get(r, r),
    key="runs_run",
)
st.query_params["run"] = run_id

run = data.run_detail(run_id)
if run is None:
    ui.stop_with("That run is no longer in the snapshot; pick another.")

# Where a family's failed pairs are shown with their errors (the extraction ones are below).
FAILURE_PAGES = {
    "question answering": "QA lineage page",
    "deep research": "deep research lineage page",
    "live extraction": "live-URL extraction page",
    "imported deep research": "imported results page",
}

counts = data.run_system_counts(run_id)
families = sorted(set(counts["family"]))
items = int(counts["n_items"].max()) if not counts.empty else int(run["n_items_registered"] or 0)
not_completed = int((counts["n_items"] - counts["n_completed"]).sum()) if not counts.empty else 0
cols = st.columns(5)
cols[0].metric("Items", items, help="Distinct items per system (the grid), from the family's mart.")
cols[1].metric("Systems", len(counts), help="Extraction engines, QA lanes or research systems.")
cols[2].metric("Completed", int(counts["n_completed"].sum()), help="Item × system pairs.")
cols[3].metric("Failed", int(counts["n_failed"].sum()), help="Item × system pairs.")
cols[4].metric("Status", ui.md_escape(run["status"]))  # metric values render Markdown

# Families the compare-runs page pairs across runs and imports.
COMPARE_FAMILIES = {
    "extraction": "extraction",
    "question answering": "qa",
    "deep research": "draco",
    "imported deep research": "draco",
}


def compare_link(system: str, family: str) -> str | None:
    if family not in COMPARE_FAMILIES:
        return None
    query = {"family": COMPARE_FAMILIES[family], "run": run_id, "lane": system}
    return "run_compare?" + urlencode(query)


st.subheader("Per system")
ui.dataframe(
    counts[["system", "family", "n_items", "n_completed", "n_failed", "n_missing"]].assign(
        compare=[
            compare_link(system, family)
            for system, family in zip(counts["system"], counts["family"], strict=True)
        ]
    ),
    hide_index=True,
    column_config={
        "compare": st.column_config.LinkColumn(
            "Compare",
            display_text="with another run",
            help="This system beside another run, lane or import on the items both share.",
        ),
        "system": st.column_config.TextColumn("System / lane"),
        "family": "Family",
        "n_items": st.column_config.NumberColumn("Items", help="Distinct items of this system."),
        "n_completed": "Completed",
        "n_failed": "Failed",
        "n_missing": st.column_config.NumberColumn(
            "Missing", help="Planned but no terminal event yet (an interrupted run)."
        ),
    },
)

st.subheader("Failures")
failures = data.run_failures(run_id)
if counts.empty:
    st.info("No scored rows for this run in the snapshot yet (is it still running?).")
elif not_completed == 0:
    st.success("Every item of this run completed for every system.")
elif failures.empty:
    st.warning(
        f"{not_completed} item × system pair(s) did not complete; their errors are on the "
        + " and ".join(FAILURE_PAGES.get(family, family + " page") for family in families)
        + "."
    )
else:
    ui.dataframe(
        data.run_error_classes(run_id),
        hide_index=True,
        column_config={
            "system": "System",
            "outcome": "Outcome",
            "error_class": "Error class",
            "n_items": "Items",
        },
    )
    failures = failures.assign(
        lineage=[
            "item_lineage?" + urlencode({"run": run_id, "system": system, "item": item})
            for system, item in zip(failures["system"], failures["item_id"], strict=True)
        ]
    )
    ui.dataframe(
        failures,
        hide_index=True,
        column_order=[
            "system",
            "item_id",
            "lineage",
            "outcome",
            "error_class",
            "error_message",
            "attempt",
            "latency_ms",
            "url",
        ],
        column_config={
            "system": "System",
            "item_id": "Item",
            "outcome": "Outcome",
            "error_class": "Error class",
            "error_message": st.column_config.TextColumn("Error message", width="large"),
            "attempt": "Attempt",
            "latency_ms": st.column_config.NumberColumn("Latency (ms)", format="%.0f"),
            "url": "URL",
            "lineage": st.column_config.LinkColumn("Lineage", display_text="open"),
        },
    )
    st.caption("Failures are terminal events and score 0; they are never dropped.")

st.subheader("Provenance")
provenance = pd.DataFrame(
    [
        ("run_id", run_id),
        ("benchmark", run.get("benchmark")),
        ("run_source", run.get("run_source")),
        ("package_version", run.get("package_version")),
        ("git_sha", run.get("git_sha")),
        ("config_sha256", run.get("config_sha256")),
        ("spec_sha256", run.get("spec_sha256")),
        ("seed", run.get("seed")),
        ("dataset_name", run.get("dataset_name")),
        ("dataset_uri", run.get("dataset_uri")),
        ("dataset_sha256", run.get("dataset_sha256")),
        ("dataset_item_count", run.get("dataset_item_count")),
        ("started_at", run.get("started_at")),
        ("finished_at", run.get("finished_at")),
        ("run_started_event_id", run.get("run_started_event_id")),
    ],
    columns=["Field", "Value"],
)
provenance["Value"] = [ui.text_or_missing(v) for v in provenance["Value"]]
ui.dataframe(provenance, hide_index=True, height="content")
if run.get("argv"):
    st.markdown("**Command line**")
    argv = run["argv"]
    st.code(" ".join(map(str, argv)) if isinstance(argv, list) else str(argv), language=None)

spec_col, systems_col = st.columns(2)
with spec_col:
    st.markdown("**Spec** (frozen; the run id is derived from it)")
    st.json(run.get("spec") or {}, expanded=2)
with systems_col:
    st.markdown("**Systems as configured**")
    st.json(run.get("systems") or [], expanded=2)
