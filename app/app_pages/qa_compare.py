"""Lane vs lane on one run: per-question labels, answers and NDCG@10, wins/losses/ties, and the
significance rows of the pair.

Deep-linkable: `qa_compare?run=<run_id>&grader=<grader_id>&a=<lane>&b=<lane>`.
"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from app import data, ui
from app.data import compare

st.title("Lane vs lane")
ui.require_qa_snapshot()

run_id, grader_id, _official = ui.pick_qa_run_and_grader("qa_cmp")

lanes = data.qa_run_lanes(run_id, grader_id)
if len(lanes) < 2:
    ui.stop_with("This run has fewer than two lanes with answers: nothing to compare.")
board = data.qa_leaderboard(run_id, grader_id)
baseline = next(iter(board["baseline_lane"].dropna()), None)
# Defaults: the best non-baseline lane as A, the baseline as B.
ranked = [lane for lane in board["lane"] if lane in lanes] + [
    lane for lane in lanes if lane not in set(board["lane"])
]
a_options = [lane for lane in ranked if lane != baseline] + [
    lane for lane in ranked if lane == baseline
]
b_options = [lane for lane in lanes if lane == baseline] + [
    lane for lane in lanes if lane != baseline
]
a_col, b_col = st.columns(2)
with a_col:
    lane_a = ui.pick("Lane A", a_options, "qa_cmp_a", "a")
with b_col:
    lane_b = ui.pick("Lane B", b_options, "qa_cmp_b", "b")
if lane_a == lane_b:
    ui.stop_with("Pick two different lanes.")

across = urlencode(
    {
        "family": "qa",
        "a": compare.side_key(run_id, lane_a, grader_id),
        "b": compare.side_key(run_id, lane_b, grader_id),
    }
)
st.markdown(
    f"Another run, another grader regime or an imported file on one side: "
    f"[compare runs](run_compare?{across})."
)

pairs = data.qa_compare(run_id, grader_id, lane_a, lane_b)
counts = pairs["result"].value_counts()
st.text(f"A = {lane_a}   B = {lane_b}   (run {run_id})")
metrics = st.columns(5)
metrics[0].metric("A wins", int(counts.get("win", 0)), help="A correct, B not (both landed)")
metrics[1].metric("B wins", int(counts.get("loss", 0)), help="B correct, A not (both landed)")
metrics[2].metric("Ties", int(counts.get("tie", 0)), help="both correct or both not")
metrics[3].metric("Unpaired", int(counts.get("unpaired", 0)), help="not landed by both lanes")
mean_diff = pairs["ndcg_10_diff"].mean()
metrics[4].metric(
    "Mean NDCG@10 diff (A − B)", ui.fmt(mean_diff if pairs["ndcg_10_diff"].notna().any() else None)
)
st.caption(
    "Wins, losses and ties count only questions both lanes landed (the pairing rule of the "
    "significance tests); label is empty where a request never landed."
)


def lineage(lane: str, item: str) -> str:
    return "qa_lineage?" + urlencode({"run": run_id, "lane": lane, "item": item})


pairs = pairs.assign(
    lineage_a=[lineage(lane_a, item) for item in pairs["item_id"]],
    lineage_b=[lineage(lane_b, item) for item in pairs["item_id"]],
)
num = st.column_config.NumberColumn
ui.dataframe(
    pairs,
    hide_index=True,
    column_order=[
        "sample_order",
        "item_id",
        "result",
        "label_a",
        "label_b",
        "ndcg_10_a",
        "ndcg_10_b",
        "ndcg_10_diff",
        "problem",
        "gold_answer",
        "answer_a",
        "answer_b",
        "outcome_a",
        "outcome_b",
        "lineage_a",
        "lineage_b",
    ],
    column_config={
        "sample_order": "#",
        "item_id": "Item",
        "result": "A vs B",
        "label_a": "Label A",
        "label_b": "Label B",
        "ndcg_10_a": num("NDCG@10 A", format="%.3f"),
        "ndcg_10_b": num("NDCG@10 B", format="%.3f"),
        "ndcg_10_diff": num("NDCG@10 A − B", format="%+.3f"),
        "problem": st.column_config.TextColumn("Question", width="large"),
        "gold_answer": "Gold answer",
        "answer_a": "Answer A",
        "answer_b": "Answer B",
        "outcome_a": "Outcome A",
        "outcome_b": "Outcome B",
        "lineage_a": st.column_config.LinkColumn("Lineage A", display_text="open"),
        "lineage_b": st.column_config.LinkColumn("Lineage B", display_text="open"),
    },
)

st.subheader("Significance of this pair")
significance = data.qa_significance(run_id, grader_id)
pair_rows = significance[
    ((significance["lane"] == lane_a) & (significance["baseline_lane"] == lane_b))
    | ((significance["lane"] == lane_b) & (significance["baseline_lane"] == lane_a))
]
if pair_rows.empty:
    st.info(
        "fct_qa_significance tests each lane against the baseline lane only, so this pair has "
        "no test of its own. Each lane's rows against the baseline:"
    )
    pair_rows = significance[significance["lane"].isin([lane_a, lane_b])]
if pair_rows.empty:
    st.text("No significance rows for these lanes.")
else:
    ui.significance_table(pair_rows)
    st.caption(
        "Paired Student t-test on per-question values over the questions both lanes landed; "
        "mean diff and direction are the lane minus its baseline; p adj. is corrected over the "
        "family shown (family size)."
    )
