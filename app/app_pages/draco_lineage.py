"""Deep-research lineage: run → judge regime → system → task, from the item score down to every
criterion, every judge sample with its justification, the request each judge call sent (the
judged report, stored once in its report event, put back and checked against the sha256 of the
bytes sent), the normalised report the judge saw, the raw system output with its raw citations,
and the event ids and hashes at every step.

Deep-linkable: `draco_lineage?run=<run_id>&judge=<judge_id>&lane=<lane>&item=<item_id>`
(`&verdict=<verdict event id>` picks the judge request shown).
Everything from a research system or a judge (reports, citations, justifications, completions)
and from the dataset is rendered inert: st.code / st.text / st.json / dataframes, never Markdown
or HTML.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from app import data, ui
from app.data import items as item_data

st.title("Deep research lineage")
ui.require_draco_snapshot()

run_id = ui.pick_draco_run("draco_lin")
judges = data.draco_judges(run_id)
judge_rows = {row["judge_id"]: row for row in judges.to_dict(orient="records")}
judge_col, lane_col, item_col = st.columns([2, 1, 2])
with judge_col:
    judge_id = ui.pick(
        "Judge regime",
        list(judge_rows),
        "draco_lin_judge",
        "judge",
        lambda j: f"{j} ({'official' if judge_rows[j].get('judge_official') else 'non-official'})",
    )
if judge_id is None:
    ui.stop_with("This run has no judge regime.")
with lane_col:
    lane = ui.pick("System", data.draco_run_lanes(run_id, judge_id), "draco_lin_lane", "lane")
items = data.draco_items(run_id, judge_id, lane) if lane else pd.DataFrame()
tasks = item_data.item_texts("draco", run_id)
item_labels = {
    row.item_id: item_data.item_label(row.position, tasks.get(row.item_id), row.item_id)
    + f" ({row.status}, {ui.points(row.score)})"
    for row in items.itertuples()
}
with item_col:
    item_id = ui.pick(
        "Task", list(item_labels), "draco_lin_item", "item", lambda i: item_labels.get(i, i)
    )
if item_id is None:
    ui.stop_with("This run has no task rows for that system.")
ui.judge_banner(judge_rows[judge_id])

item = data.draco_item(run_id, lane, judge_id, item_id)
if item is None:
    ui.stop_with("That task has no item row in the current snapshot.")


def show_text(text: Any) -> None:
    """System, judge or dataset text, verbatim and inert; long texts scroll."""
    value = "" if text is None else str(text)
    long = len(value) > 2000 or value.count("\n") > 30
    st.code(value, language=None, wrap_lines=True, height=480 if long else "content")


st.subheader("Item score")
st.text(
    f"run {run_id} · system {lane} · task {item_id} · domain {item.get('domain')} · status "
    f"{item.get('status')} · research {item.get('research_state')} · attempt "
    f"{item.get('attempt') if item.get('attempt') is not None else '–'}"
)
metrics = st.columns(5)
metrics[0].metric("Score", ui.points(item.get("score")))
metrics[1].metric("Pass rate", ui.points(item.get("pass_rate")))
metrics[2].metric("Samples", f"{item.get('n_samples')} / {item.get('n_samples_expected')}")
metrics[3].metric(
    "Flagged samples",
    int((item.get("n_unparsed_samples") or 0) + (item.get("n_failed_samples") or 0)),
)
metrics[4].metric("Wall clock (s)", ui.fmt((item.get("wall_clock_ms") or float("nan")) / 1000, 1))
st.text(
    f"raw score Σ w·v = {ui.fmt(item.get('raw_score'))} over positive weight "
    f"{ui.fmt(item.get('positive_weight'), 0)} → clamp to [0, 1] = {ui.fmt(item.get('score'), 4)}"
)
if item.get("status") == "failed":
    st.markdown("**Research failed** (the task scores 0.0)")
    st.code(
        f"{item.get('error_class') or ''}: {item.get('error_message') or ''}",
        language=None,
        wrap_lines=True,
    )
st.markdown("**Task**")
show_text(item.get("problem"))
with st.expander("The full item row (marts.fct_draco_items)"):
    st.dataframe(
        pd.DataFrame(
            [(k, "–" if v is None else str(v)) for k, v in item.items()],
            columns=["Column", "Value"],
        ),
        hide_index=True,
    )

st.subheader("Axis scores")
axes = data.draco_item_axes(run_id, lane, judge_id, item_id)
if axes.empty:
    st.text("No axis rows.")
else:
    axes = axes.assign(score_points=axes["score"] * 100, pass_points=axes["pass_rate"] * 100)
    st.dataframe(
        axes,
        hide_index=True,
        column_order=[
            "axis_title",
            "score_points",
            "pass_points",
            "n_criteria",
            "n_criteria_judged",
            "n_passed",
            "n_split",
            "n_flagged_samples",
            "raw_score",
            "positive_weight",
        ],
        column_config={
            "axis_title": "Axis",
            "score_points": st.column_config.NumberColumn("Score", format="%.1f"),
            "pass_points": st.column_config.NumberColumn("Pass rate", format="%.1f"),
            "n_criteria": "Criteria",
            "n_criteria_judged": "Judged",
            "n_passed": "Passed",
            "n_split": "Samples disagree",
            "n_flagged_samples": "Flagged samples",
            "raw_score": st.column_config.NumberColumn("Σ w·v", format="%.3f"),
            "positive_weight": st.column_config.NumberColumn("Σ positive w", format="%g"),
        },
        key="draco_lin_axes",
    )

st.subheader("Criteria")
criteria = data.draco_item_criteria(run_id, lane, judge_id, item_id)
if criteria.empty:
    st.text("No criteria rows.")
else:
    st.dataframe(
        criteria,
        hide_index=True,
        column_order=[
            "criterion_position",
            "criterion_id",
            "axis",
            "polarity",
            "registered_weight",
            "weight",
            "n_samples",
            "n_met",
            "v",
            "weighted_v",
            "passed",
            "split",
            "flagged",
            "is_overridden",
            "is_floored",
            "requirement",
            "criterion_event_id",
        ],
        column_config={
            "criterion_position": "#",
            "criterion_id": "Criterion",
            "axis": "Axis",
            "polarity": "Polarity",
            "registered_weight": st.column_config.NumberColumn("Weight", format="%g"),
            "weight": st.column_config.NumberColumn(
                "Effective weight", format="%g", help="after overrides and the penalty floor"
            ),
            "n_samples": "Samples",
            "n_met": "Met",
            "v": st.column_config.NumberColumn("v", format="%.3f"),
            "weighted_v": st.column_config.NumberColumn("w·v", format="%.3f"),
            "passed": "Passed",
            "split": "Samples disagree",
            "flagged": "Flagged",
            "is_overridden": "Overridden",
            "is_floored": "Floored",
            "requirement": st.column_config.TextColumn("Requirement", width="large"),
            "criterion_event_id": "Criterion event",
        },
        key="draco_lin_criteria",
    )

st.subheader("Judge samples")
attempt = item.get("attempt")
samples = (
    data.draco_verdict_samples(run_id, lane, judge_id, item_id, int(attempt))
    if item.get("research_state") in ("reported", "unreported") and attempt is not None
    else pd.DataFrame()
)
if samples.empty:
    st.text("No judge samples (the research never produced a report to judge).")
else:
    flagged = samples[samples["flagged"]]
    st.text(
        f"{len(samples)} verdict event(s) · {int(samples['is_latest_attempt'].sum())} scored "
        f"(latest judge attempt) · {len(flagged)} flagged (unparsed or failed: scored as the "
        "verdict least favourable to the system) · judge model "
        f"{samples['judge_model'].dropna().iloc[0] if samples['judge_model'].notna().any() else '?'}"
    )
    st.dataframe(
        samples,
        hide_index=True,
        column_order=[
            "criterion_id",
            "sample",
            "judge_attempt",
            "is_latest_attempt",
            "outcome",
            "flagged",
            "verdict",
            "met",
            "justification",
            "reasks",
            "error_class",
            "error_message",
            "raw_completion",
            "llm_model",
            "prompt_sha256",
            "verdict_event_id",
            "source_event_id",
        ],
        column_config={
            "criterion_id": "Criterion",
            "sample": "Sample",
            "judge_attempt": "Judge attempt",
            "is_latest_attempt": "Scored",
            "outcome": "Outcome",
            "flagged": "Flagged",
            "verdict": "Verdict",
            "met": "Met (scored)",
            "justification": st.column_config.TextColumn("Justification", width="large"),
            "reasks": "Re-asks",
            "error_class": "Error",
            "error_message": "Error message",
            "raw_completion": st.column_config.TextColumn("Raw completion", width="medium"),
            "llm_model": "Model",
            "prompt_sha256": "Prompt sha256",
            "verdict_event_id": "Verdict event",
            "source_event_id": "Report judged",
        },
        key="draco_lin_samples",
    )

st.subheader("Judge requests (what the judge was sent)")
if samples.empty:
    st.text("No judge samples, so no judge requests.")
else:
    sample_labels = {
        row.verdict_event_id: f"{row.criterion_id} · sample {row.sample} · judge attempt "
        f"{row.judge_attempt} · {row.outcome}"
        for row in samples.itertuples()
    }
    verdict_event_id = ui.pick(
        "Verdict",
        list(sample_labels),
        "draco_lin_verdict",
        "verdict",
        lambda v: sample_labels.get(v, v),
    )
    calls = data.draco_judge_calls(verdict_event_id) if verdict_event_id else []
    if not calls:
        st.text(
            "No LLM request recorded for this verdict (an offline judge, or a call that failed "
            "before any answer)."
        )
    for call in calls:
        request = call["request"]
        if call["error"]:
            check = f"the body could not be rebuilt: {call['error']}"
        elif request.get("body_sha256") is None:
            check = "body recorded inline (no sha256 of the bytes sent was kept)"
        elif request.get("body_matches_sha256"):
            check = (
                f"body sha256 {request['body_sha256']}: the rebuilt body matches the bytes "
                "sent (the judged report, stored once in the report event, put back)"
            )
        else:
            check = f"body sha256 {request['body_sha256']}: the rebuilt body does NOT match"
        st.text(
            f"call {call['call']} of {len(calls)} · {request.get('method')} {request.get('url')} "
            f"· model {call['model']} · {check}"
        )
        for role, content in call["messages"]:
            st.text(f"{role}:")
            show_text(content)
        with st.expander(f"Call {call['call']}: the request as sent (JSON)"):
            st.json(request, expanded=2)

st.subheader("Research attempts")
reports = data.draco_reports(run_id, lane, item_id)
if not reports:
    st.text("No research event for this system and task (missing).")
else:
    st.dataframe(
        pd.DataFrame(reports),
        hide_index=True,
        column_order=[
            "attempt",
            "status",
            "is_latest_attempt",
            "normalizer_version",
            "provider",
            "vendor_run_id",
            "wall_clock_ms",
            "queue_ms",
            "polls",
            "poll_interval_s",
            "cost_usd",
            "cost_basis",
            "error_stage",
            "error_class",
            "error_message",
            "research_event_id",
            "report_event_id",
            "research_failed_event_id",
        ],
        column_config={
            "attempt": "Attempt",
            "status": "Status",
            "is_latest_attempt": "Latest",
            "normalizer_version": "Normalizer",
            "provider": "Provider",
            "vendor_run_id": "Vendor run id",
            "wall_clock_ms": st.column_config.NumberColumn("Wall clock (ms)", format="%.0f"),
            "queue_ms": st.column_config.NumberColumn("Queue (ms)", format="%.0f"),
            "polls": "Polls",
            "poll_interval_s": "Poll interval (s)",
            "cost_usd": st.column_config.NumberColumn("Cost ($)", format="$%.4f"),
            "cost_basis": "Cost basis",
            "error_stage": "Error stage",
            "error_class": "Error",
            "error_message": "Error message",
            "research_event_id": "Research event",
            "report_event_id": "Report event",
            "research_failed_event_id": "Failure event",
        },
        key="draco_lin_attempts",
    )


def as_list(value: Any) -> list[Any]:
    """A DuckDB list column (a numpy array, a list, or NULL) as a plain list."""
    return [] if value is None else list(value)


def report_of(column: str) -> dict[str, Any] | None:
    """The research outcome row the item was scored on, matched by one of its event ids."""
    wanted = item.get(column)
    return next((r for r in reports if wanted and r.get(column) == wanted), None)


judged = report_of("report_event_id") or report_of("research_event_id")
report_col, raw_col = st.columns(2)
with report_col:
    st.subheader("Normalised report (what the judge saw)")
    if judged is None or judged.get("judged_text") is None:
        st.text("No normalised report for the scored attempt.")
    else:
        st.text(
            f"normalizer {judged.get('normalizer_version')} · own bibliography stripped: "
            f"{judged.get('stripped_bibliography')} · raw output sha256 "
            f"{judged.get('raw_output_sha256')}"
        )
        show_text(judged["judged_text"])
        bibliography = as_list(judged.get("bibliography"))
        if bibliography:
            st.markdown("**Uniform bibliography**")
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            "n": b.get("number"),
                            "url": str(b.get("url")),
                            "title": str(b.get("title")),
                        }
                        for b in bibliography
                        if isinstance(b, dict)
                    ]
                ),
                hide_index=True,
                key="draco_lin_bibliography",
            )
        if judged.get("stripped_text"):
            st.markdown("**Stripped block** (the system's own bibliography, removed)")
            st.text(f"heading: {judged.get('strip_heading')}")
            show_text(judged["stripped_text"])
with raw_col:
    st.subheader("Raw system output")
    if judged is None or judged.get("raw_output") is None:
        st.text("No raw output for the scored attempt.")
    else:
        st.text(
            f"provider {judged.get('provider')} · vendor run {judged.get('vendor_run_id') or '–'}"
        )
        show_text(judged["raw_output"])
        citations = as_list(judged.get("raw_citations"))
        st.markdown("**Raw citations** (as the system returned them)")
        if citations:
            st.dataframe(
                pd.DataFrame(
                    [
                        {"url": str(c.get("url")), "title": str(c.get("title"))}
                        for c in citations
                        if isinstance(c, dict)
                    ]
                ),
                hide_index=True,
                key="draco_lin_citations",
            )
        else:
            st.text("No structured citations.")

st.subheader("Events it came from")
STAGES: list[tuple[str, Any]] = [
    ("task", item.get("task_event_id")),
    ("judge regime", judge_rows[judge_id].get("regime_event_id")),
    ("research", item.get("research_event_id")),
    ("research failed", item.get("research_failed_event_id")),
    ("report", item.get("report_event_id")),
]
if judged is not None:
    STAGES += [
        (f"provider call {n}", event_id)
        for n, event_id in enumerate(as_list(judged.get("source_event_ids")), start=1)
    ]
if not samples.empty:
    STAGES += [
        (f"verdict {row.criterion_id} s{row.sample} a{row.judge_attempt}", row.verdict_event_id)
        for row in samples.itertuples()
    ]
event_rows = data.events([str(e) for _, e in STAGES if e])
by_id = {row["event_id"]: row for row in event_rows}
listing = pd.DataFrame(
    [
        {
            "stage": stage,
            "event_id": event_id or "–",
            "event_type": by_id.get(event_id, {}).get("event_type", "–"),
            "segment_line": by_id.get(event_id, {}).get("segment_line", "–"),
            "content_sha256": by_id.get(event_id, {}).get("content_sha256", "–"),
            "prev_sha256": by_id.get(event_id, {}).get("prev_sha256", "–"),
            "occurred_at": str(by_id.get(event_id, {}).get("occurred_at", "–")),
        }
        for stage, event_id in STAGES
    ]
)
st.dataframe(
    listing,
    hide_index=True,
    column_config={
        "stage": "Stage",
        "event_id": "Event id",
        "event_type": "Event type",
        "segment_line": "Segment:line",
        "content_sha256": "content_sha256",
        "prev_sha256": "prev_sha256",
        "occurred_at": "Occurred at",
    },
    key="draco_lin_events",
)
missing = [str(e) for _, e in STAGES if e and e not in by_id]
if missing:
    st.warning("Some lineage event ids are not in dim_events:")
    st.code("\n".join(missing), language=None)

st.subheader("Event payloads")
for stage, event_id in STAGES:
    event = by_id.get(event_id or "")
    if event is None or stage.startswith("verdict"):
        continue
    with st.expander(f"{ui.md_escape(stage)} · {ui.md_escape(event['event_id'])}"):
        ui.event_json(event)
