"""Item lineage: one score row → the events it came from → the raw output and the ground truth.

Deep-linkable: `item_lineage?run=<run_id>&system=<system>&item=<item_id>`.
Everything shown from the events (output text, ground truth, payloads) is provider or dataset
content and is rendered inert (st.code / st.json / dataframes), never as Markdown or HTML.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from app import data, ui
from app.data import items as item_data

st.title("Item lineage")
ui.require_snapshot()

runs = data.lineage_runs()
if runs.empty:
    ui.stop_with("The snapshot has no scored pages yet. Run `bench demo`, then reload this page.")
run_labels = {
    row.run_id: f"{row.run_id} · {row.dataset_name} · {row.status}" for row in runs.itertuples()
}

run_col, system_col, item_col = st.columns([2, 1, 2])
with run_col:
    run_id = ui.pick("Run", list(run_labels), "lineage_run", "run", lambda r: run_labels.get(r, r))
with system_col:
    system = ui.pick("System", data.run_system_names(run_id), "lineage_system", "system")
items = data.run_items(run_id, system) if system else pd.DataFrame()
urls = item_data.item_texts("extraction", run_id)
item_labels = {
    row.item_id: item_data.item_label(row.position, urls.get(row.item_id), row.item_id)
    + f" ({row.outcome})"
    for row in items.itertuples()
}
with item_col:
    item_id = ui.pick(
        "Item", list(item_labels), "lineage_item", "item", lambda i: item_labels.get(i, i)
    )
if item_id is None:
    ui.stop_with("This run has no scored items for that system.")

page = data.page_score(run_id, system, item_id)
if page is None:
    ui.stop_with("That item has no score row in the current snapshot.")

st.subheader("Score")
st.text(
    f"run {run_id} · system {system} {page.get('system_version')} · item {item_id} · "
    f"outcome {page.get('outcome')} · attempt {page.get('attempt')}"
)
if page.get("url"):
    st.text(f"URL: {page['url']}")
metrics = st.columns(6)
metrics[0].metric("Completeness", ui.fmt(page.get("completeness")))
metrics[1].metric("Token F1", ui.fmt(page.get("token_f1")))
metrics[2].metric("Shingle precision", ui.fmt(page.get("page_precision")))
metrics[3].metric("Shingle recall", ui.fmt(page.get("page_recall")))
metrics[4].metric("Useful success", "yes" if page.get("useful_success") else "no")
metrics[5].metric("Latency (ms)", ui.fmt(page.get("latency_ms"), 0))

LONG_TEXT = {"output_text", "error_message"}
score_row = pd.DataFrame(
    [(k, "–" if v is None else str(v)) for k, v in page.items() if k not in LONG_TEXT],
    columns=["Column", "Value"],
)
with st.expander("The full score row (marts.fct_extraction_pages)"):
    st.dataframe(score_row, hide_index=True)

st.subheader("Events it came from")
lineage_ids = [page.get("item_event_id"), page.get("extraction_event_id")]
event_rows = data.events([e for e in lineage_ids if e])
if not event_rows:
    st.warning("The events of this row are not in the snapshot's dim_events.")
else:
    st.dataframe(
        pd.DataFrame(event_rows),
        hide_index=True,
        column_order=[
            "event_type",
            "event_id",
            "segment_line",
            "occurred_at",
            "content_sha256",
            "prev_sha256",
            "schema_version",
            "stored_schema_version",
        ],
        column_config={
            "event_type": "Event type",
            "event_id": "Event id",
            "content_sha256": "content_sha256",
            "prev_sha256": "prev_sha256",
            "segment_line": "Segment:line",
            "occurred_at": "Occurred at",
            "schema_version": "Schema v",
            "stored_schema_version": "Stored v",
        },
    )
by_id = {row["event_id"]: row for row in event_rows}
extraction_event = by_id.get(page.get("extraction_event_id"))
item_event = by_id.get(page.get("item_event_id"))
if extraction_event is not None and page.get("extraction_content_sha256"):
    if extraction_event["content_sha256"] == page["extraction_content_sha256"]:
        st.success("The score row's extraction_content_sha256 matches its event.")
    else:
        st.error("The score row's extraction_content_sha256 does not match its event.")
missing = [e for e in lineage_ids if e and e not in by_id]
if missing:
    st.warning("Some lineage event ids are not in dim_events:")
    st.code("\n".join(missing), language=None)


def show_text(text: str) -> None:
    """Provider or dataset text, verbatim and inert; long texts scroll instead of growing."""
    long = len(text) > 2000 or text.count("\n") > 30
    st.code(text, language=None, wrap_lines=True, height=480 if long else "content")


def payload(event: dict[str, Any] | None) -> dict[str, Any]:
    value = event.get("payload") if event else None
    return value if isinstance(value, dict) else {}


st.subheader("Raw extractor output and ground truth")
output_col, truth_col = st.columns(2)
with output_col:
    st.markdown("**Extractor output** (as stored, shown as plain text)")
    if page.get("output_text") is not None:
        show_text(page["output_text"])
    else:
        st.text("No output: this extraction did not complete.")
    if page.get("error_class") or page.get("error_message"):
        st.markdown("**Error**")
        st.code(
            f"{page.get('error_class') or ''}: {page.get('error_message') or ''}",
            language=None,
            wrap_lines=True,
        )
with truth_col:
    st.markdown("**Ground truth** (from the item_registered event)")
    truth = payload(item_event).get("ground_truth_text")
    if truth is not None:
        show_text(str(truth))
    else:
        st.text("The item_registered event is not in the snapshot.")
    anchors = payload(item_event).get("anchors")
    if anchors:
        st.markdown("**Anchors**")
        st.dataframe(pd.DataFrame({"anchor": [str(a) for a in anchors]}), hide_index=True)

st.subheader("Event payloads")
for event in event_rows:
    with st.expander(f"{ui.md_escape(event['event_type'])} · {ui.md_escape(event['event_id'])}"):
        st.json(
            {
                "event_id": event["event_id"],
                "event_type": event["event_type"],
                "run_id": event["run_id"],
                "occurred_at": str(event["occurred_at"]),
                "producer": event["producer"],
                "payload": event["payload"],
                "content_sha256": event["content_sha256"],
                "prev_sha256": event["prev_sha256"],
            },
            expanded=1,
        )
