"""QA lineage: one answer row → its events → the raw search response, the normalized chunks, the
synthesized answer, the grader's raw completion, the question and the gold answer.

Deep-linkable: `qa_lineage?run=<run_id>&lane=<lane>&item=<item_id>` (optionally `&grader=`).
Everything from a provider or an LLM (response bodies, chunks, answers, completions) and from
the dataset is rendered inert: st.code / st.text / st.json / dataframes, never Markdown or HTML.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from app import data, ui
from app.data import items as item_data

st.title("QA lineage")
ui.require_qa_snapshot()

runs = data.qa_lineage_runs()
if runs.empty:
    ui.stop_with("The snapshot has no QA answer rows yet. " + ui.QA_HOW_TO)
run_labels = {
    row.run_id: f"{row.run_id} · {row.benchmark}"
    + (f" · series {row.series} run {row.run_index}" if isinstance(row.series, str) else "")
    + f" · {row.status or 'status ?'}"
    for row in runs.itertuples()
}
run_col, lane_col, item_col = st.columns([2, 1, 2])
with run_col:
    run_id = ui.pick("Run", list(run_labels), "qa_lin_run", "run", lambda r: run_labels[r])
with lane_col:
    lane = ui.pick("Lane", data.qa_run_lanes(run_id), "qa_lin_lane", "lane")
items = data.qa_items(run_id, lane) if lane else pd.DataFrame()
questions = item_data.item_texts("qa", run_id)
item_labels: dict[str, str] = {}
for row in items.itertuples():
    outcome = str(row.label or row.outcome).replace("_", " ")
    item_labels.setdefault(
        row.item_id,
        item_data.item_label(row.sample_order, questions.get(row.item_id), row.item_id)
        + f" ({outcome})",
    )
with item_col:
    item_id = ui.pick(
        "Question", list(item_labels), "qa_lin_item", "item", lambda i: item_labels.get(i, i)
    )
if item_id is None:
    ui.stop_with("This run has no answer rows for that lane.")

answer_rows = data.qa_answer(run_id, lane, item_id)
if not answer_rows:
    ui.stop_with("That question has no answer row in the current snapshot.")
if len(answer_rows) > 1:
    by_grader = {str(r.get("grader_id")): r for r in answer_rows}
    grader = ui.pick("Grader regime", list(by_grader), "qa_lin_grader", "grader")
    answer = by_grader[grader]
else:
    answer = answer_rows[0]
if answer.get("grader_id"):
    ui.grader_banner(answer["grader_id"], answer.get("grader_official"))

st.subheader("Answer row")
st.text(
    f"run {run_id} · lane {lane} · item {item_id} · outcome {answer.get('outcome')} · "
    f"label {answer.get('label') or '– (not graded)'} · attempt {answer.get('attempt')}"
)
metrics = st.columns(6)
metrics[0].metric("Label", ui.md_escape(answer.get("label") or "–"))
metrics[1].metric("Landed", "yes" if answer.get("landed") else "no")
metrics[2].metric("NDCG@10", ui.fmt(answer.get("ndcg_10")))
metrics[3].metric("MRR", ui.fmt(answer.get("mrr")))
metrics[4].metric("LLM hit@10", ui.fmt(answer.get("llm_hit_10")))
metrics[5].metric("Round trip (ms)", ui.fmt(answer.get("round_trip_ms"), 0))
with st.expander("The full answer row (marts.fct_qa_answers)"):
    st.dataframe(
        pd.DataFrame(
            [(k, "–" if v is None else str(v)) for k, v in answer.items()],
            columns=["Column", "Value"],
        ),
        hide_index=True,
    )


def show_text(text: Any) -> None:
    """Provider, LLM or dataset text, verbatim and inert; long texts scroll."""
    value = "" if text is None else str(text)
    long = len(value) > 2000 or value.count("\n") > 30
    st.code(value, language=None, wrap_lines=True, height=480 if long else "content")


question_col, gold_col = st.columns([3, 1])
with question_col:
    st.markdown("**Question**")
    show_text(answer.get("problem"))
with gold_col:
    st.markdown("**Gold answer**")
    show_text(answer.get("gold_answer"))

st.subheader("Events it came from")
STAGES = (
    ("question", None),
    ("search", "search_event_id"),
    ("chunks", "chunks_event_id"),
    ("answer", "answer_event_id"),
    ("grade", "grade_event_id"),
)
stage_ids = {stage: answer.get(column) for stage, column in STAGES if column}
stage_ids["question"] = data.qa_question_event_id(run_id, item_id)
event_rows = data.events([e for e in stage_ids.values() if e])
by_id = {row["event_id"]: row for row in event_rows}
listing = pd.DataFrame(
    [
        {
            "stage": stage,
            "event_id": stage_ids.get(stage) or "–",
            "event_type": by_id.get(stage_ids.get(stage), {}).get("event_type", "–"),
            "segment_line": by_id.get(stage_ids.get(stage), {}).get("segment_line", "–"),
            "content_sha256": by_id.get(stage_ids.get(stage), {}).get("content_sha256", "–"),
            "occurred_at": str(by_id.get(stage_ids.get(stage), {}).get("occurred_at", "–")),
        }
        for stage, _ in STAGES
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
        "occurred_at": "Occurred at",
    },
    key="qa_lineage_events",
)
missing = [e for e in stage_ids.values() if e and e not in by_id]
if missing:
    st.warning("Some lineage event ids are not in dim_events:")
    st.code("\n".join(missing), language=None)


def payload_of(stage: str) -> dict[str, Any]:
    event = by_id.get(stage_ids.get(stage) or "")
    value = event.get("payload") if event else None
    return value if isinstance(value, dict) else {}


st.subheader("Raw search response")
search = payload_of("search")
if not search:
    st.text("No search event for this row.")
else:
    search_event = by_id[stage_ids["search"]]
    st.text(
        f"{search_event['event_type']} · provider {search.get('provider')} · "
        f"status {search.get('status_code') or '–'} · HTTP attempts {search.get('http_attempts')}"
    )
    if search.get("error_class") or search.get("error_message"):
        st.markdown("**Error** (the request never produced a usable response)")
        st.code(
            f"{search.get('error_class') or ''}: {search.get('error_message') or ''}",
            language=None,
            wrap_lines=True,
        )
    st.markdown("**Response body** (raw, as stored; shown as plain text)")
    if search.get("raw_body") is None:
        st.text("No response body was stored for this call.")
    else:
        show_text(search["raw_body"])
    with st.expander("Request (secrets redacted) and timings"):
        st.json({"request": search.get("request"), "timings": search.get("timings")}, expanded=2)

st.subheader("Normalized chunks")
chunks_payload = payload_of("chunks")
chunks = chunks_payload.get("chunks") or []
if not chunks:
    st.text("No normalized chunks for this row.")
else:
    table = pd.DataFrame(
        [
            {
                "rank": c.get("rank"),
                "url": str(c.get("url")),
                "title": str(c.get("title")),
                "text": str(c.get("text")),
            }
            for c in chunks
        ]
    )
    grades = data.qa_relevance_grades(run_id, lane, item_id)
    if not grades.empty:
        latest = grades.drop_duplicates(subset=["judge_id", "rank"], keep="first")
        if latest["judge_id"].nunique() == 1:
            table = table.merge(
                latest[["rank", "grade", "parse_ok"]], on="rank", how="left"
            ).rename(columns={"grade": "umbrela_grade", "parse_ok": "grade_parse_ok"})
    st.dataframe(
        table,
        hide_index=True,
        column_config={
            "rank": "Rank",
            "url": st.column_config.TextColumn("URL"),
            "title": "Title",
            "text": st.column_config.TextColumn("Text", width="large"),
            "umbrela_grade": st.column_config.NumberColumn("UMBRELA grade", format="%d"),
            "grade_parse_ok": "Parsed",
        },
        key="qa_lineage_chunks",
    )
    threshold = answer.get("relevance_threshold")
    threshold = float(threshold) if ui.is_number(threshold) else float("nan")
    st.caption(
        ui.md_escape(
            f"normalizer version {chunks_payload.get('normalizer_version')}; relevant = UMBRELA "
            f"grade ≥ {threshold:g}"
        )
    )

answer_col, grade_col = st.columns(2)
with answer_col:
    st.subheader("Synthesized answer")
    synthesized = payload_of("answer")
    if not synthesized:
        st.text("No answer was synthesized (the search did not land).")
    else:
        st.text(f"outcome {synthesized.get('outcome')}")
        show_text(synthesized.get("answer") if synthesized.get("answer") is not None else "")
        llm = synthesized.get("llm") or {}
        if llm:
            st.text(f"synthesizer {llm.get('provider')}:{llm.get('model')}")
with grade_col:
    st.subheader("Grader")
    graded = payload_of("grade")
    if not graded:
        st.text("Not graded (the search did not land).")
    elif graded.get("error_class"):  # a failed grader call (either event shape, see events.py)
        st.text(
            f"The grader call failed ({graded['error_class']}): scored as the least favourable "
            "grade, B / incorrect."
        )
        show_text(graded.get("error_message") or "")
    else:
        st.text(
            f"grade {graded.get('grade')} · label {graded.get('label')} · "
            f"parse ok {graded.get('parse_ok')} · official {graded.get('official')}"
        )
        llm = graded.get("llm") or {}
        st.markdown("**Raw completion** (as returned by the grader, plain text)")
        if llm.get("raw_completion") is not None:
            show_text(llm["raw_completion"])
            st.text(
                f"grader model {llm.get('provider')}:{llm.get('model')} · temperature "
                f"{llm.get('temperature')} · max tokens {llm.get('max_tokens')}"
            )
        else:
            st.text("This grader made no LLM call (no raw completion).")

st.subheader("Event payloads")
for stage, _ in STAGES:
    event = by_id.get(stage_ids.get(stage) or "")
    if event is None:
        continue
    with st.expander(
        f"{stage} · {ui.md_escape(event['event_type'])} · {ui.md_escape(event['event_id'])}"
    ):
        ui.event_json(event)
