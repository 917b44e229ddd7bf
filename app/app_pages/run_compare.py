"""Any two sides on the items they share: a side is (run or import, lane, grader/judge regime),
for question answering and deep research. Per-item differences, wins/losses/ties and the paired
test (the significance marts' own function, on a pair no mart precomputed).

Deep-linkable: `run_compare?family=qa|draco&a=<run>|<lane>|<regime>&b=<run>|<lane>|<regime>`;
`run_compare?family=...&run=<run>[&lane=<lane>]` starts side A on that run (and lane).
"""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app import ui
from app.data import compare

FAMILIES = {"qa": "Question answering (SimpleQA lanes)", "draco": "Deep research (DRACO)"}

st.title("Compare runs")
ui.require_snapshot()
st.caption(
    "Pick any two sides — a run or an import, one lane or system, one grader or judge regime — "
    "and compare them on the items both have. Same run and regime is the lane-vs-lane view; "
    "two runs of a series is run-over-run change; an import beside a run of ours is their "
    "harness against ours on the same questions."
)

family = ui.pick("Family", list(FAMILIES), "cmp_family", "family", lambda f: FAMILIES[f])
if family == "qa":
    sides = compare.qa_sides().rename(columns={"grader_id": "regime"})
else:
    sides = compare.draco_sides().rename(columns={"judge_id": "regime"})
if sides.empty:
    ui.stop_with(
        "The snapshot has no "
        + ("graded QA answers" if family == "qa" else "deep-research item scores")
        + " to compare yet."
    )


def side_label(row) -> str:
    where = "import" if bool(row.imported) else "run"
    series = getattr(row, "series", None)
    in_series = f" · series {series} run {row.run_index}" if isinstance(series, str) else ""
    verdicts = (
        " · the file's own verdicts" if bool(getattr(row, "imported_verdicts", False)) else ""
    )
    return (
        f"{row.lane} · {where} {row.run_id}{in_series} · regime {row.regime}{verdicts} · "
        f"{row.n_items} item(s)"
    )


labels = {
    compare.side_key(row.run_id, row.lane, row.regime): side_label(row)
    for row in sides.itertuples()
}
keys = list(labels)
# `?run=` (and `&lane=`), as the runs page links: that run's sides first, so A starts there.
linked_run, linked_lane = st.query_params.get("run"), st.query_params.get("lane")
if linked_run and "a" not in st.query_params:
    keys.sort(
        key=lambda k: (
            compare.parse_side(k)[0] != linked_run,
            linked_lane is not None and compare.parse_side(k)[1] != linked_lane,
        )
    )
a_col, b_col = st.columns(2)
with a_col:
    side_a = ui.pick("Side A", keys, f"cmp_{family}_a", "a", lambda k: labels[k])
# B defaults to the same lane and regime in an earlier run when there is one (run-over-run),
# else the next side.
assert side_a is not None
same_lane = [
    k
    for k in keys[keys.index(side_a) + 1 :]
    if compare.parse_side(k)[1:] == compare.parse_side(side_a)[1:]
]
b_options = same_lane + [k for k in keys if k != side_a and k not in same_lane] + [side_a]
with b_col:
    side_b = ui.pick("Side B", b_options, f"cmp_{family}_b", "b", lambda k: labels[k])
assert side_b is not None
if side_a == side_b:
    ui.stop_with("Pick two different sides.")
run_a, lane_a, regime_a = compare.parse_side(side_a)
run_b, lane_b, regime_b = compare.parse_side(side_b)
imported_verdicts = {
    compare.side_key(row.run_id, row.lane, row.regime)
    for row in sides.itertuples()
    if bool(getattr(row, "imported_verdicts", False))
}

if family == "qa":
    pairs = compare.qa_cross_compare(run_a, lane_a, regime_a, run_b, lane_b, regime_b)
else:
    pairs = compare.draco_cross_compare(run_a, lane_a, regime_a, run_b, lane_b, regime_b)
tally = compare.paired_tally(pairs)

st.text(f"A = {labels[side_a]}\nB = {labels[side_b]}")
if regime_a != regime_b:
    st.warning(
        ui.md_escape(
            f"The two sides were graded under different regimes ({regime_a} vs {regime_b}): a "
            "difference mixes the systems with their graders."
        )
    )
if tally.n_pairs + tally.unpaired == 0:
    ui.stop_with("These two sides share no item: nothing to pair.")

value_name = "Accuracy" if family == "qa" else "DRACO score"
metrics = st.columns(6)
metrics[0].metric("A wins", tally.wins, help="A better than B on the item")
metrics[1].metric("B wins", tally.losses, help="B better than A on the item")
metrics[2].metric("Ties", tally.ties)
metrics[3].metric(
    "Unpaired",
    tally.unpaired,
    help="Shared items not landed by both sides (QA's pairing rule): not won, lost or tied.",
)
metrics[4].metric("Paired items", tally.n_pairs)
metrics[5].metric("Only one side", tally.not_shared, help="Items the other side does not have.")


SCALE = "qa_strict_accuracy" if family == "qa" else "draco_score"


def shown(value: float | None) -> str:
    return ui.metric_text(SCALE, value)


st.subheader("The paired test")
test = pd.DataFrame(
    [
        {
            "metric": "correct (0/1)" if family == "qa" else "item score",
            "n_pairs": tally.n_pairs,
            "mean_a": shown(tally.mean_a),
            "mean_b": shown(tally.mean_b),
            "mean_diff": ui.display_value(SCALE, tally.mean_diff),
            "t_stat": tally.t_stat,
            "p_ttest": tally.p_ttest,
            "wilcoxon_stat": tally.wilcoxon_stat,
            "p_wilcoxon": tally.p_wilcoxon,
        }
    ]
)
num = st.column_config.NumberColumn
ui.dataframe(
    test,
    hide_index=True,
    column_config={
        "metric": "Per-item value",
        "n_pairs": "n pairs",
        "mean_a": f"{value_name} A",
        "mean_b": f"{value_name} B",
        "mean_diff": num("Mean diff (A − B)", format="%+.4f" if family == "qa" else "%+.2f"),
        "t_stat": num("t", format="%.3f"),
        "p_ttest": num("p (paired t)", format="%.4f"),
        "wilcoxon_stat": num("W", format="%.1f"),
        "p_wilcoxon": num("p (Wilcoxon)", format="%.4f"),
    },
)
st.caption(
    "Over the paired items only, in the same functions the significance marts use "
    "(scipy.stats.ttest_rel and wilcoxon, two-sided; identical vectors give p = 1, fewer than "
    "two pairs no test). Uncorrected: this is one pair you chose, not a family of comparisons. "
    "Two runs of a series are not independent replicates (lanes may learn between runs)."
)

if family == "qa":

    def lineage(run_id: str, lane: str, item: str) -> str:
        return "qa_lineage?" + urlencode({"run": run_id, "lane": lane, "item": item})

    pairs = pairs.assign(
        lineage_a=[lineage(run_a, lane_a, i) for i in pairs["item_id"]],
        lineage_b=[lineage(run_b, lane_b, i) for i in pairs["item_id"]],
    )
    columns = {
        "sample_order": "#",
        "item_id": "Item",
        "result": "A vs B",
        "label_a": "Label A",
        "label_b": "Label B",
        "ndcg_10_a": num("NDCG@10 A", format="%.3f"),
        "ndcg_10_b": num("NDCG@10 B", format="%.3f"),
        "problem": st.column_config.TextColumn("Question", width="large"),
        "gold_answer": "Gold answer",
        "answer_a": "Answer A",
        "answer_b": "Answer B",
        "outcome_a": "Outcome A",
        "outcome_b": "Outcome B",
        "lineage_a": st.column_config.LinkColumn("Lineage A", display_text="open"),
        "lineage_b": st.column_config.LinkColumn("Lineage B", display_text="open"),
    }
else:

    def lineage(run_id: str, lane: str, judge: str, item: str) -> str:
        if compare.side_key(run_id, lane, judge) in imported_verdicts:
            return "imports"  # an imported file's verdicts: shown on the imports page
        return "draco_lineage?" + urlencode(
            {"run": run_id, "lane": lane, "judge": judge, "item": item}
        )

    pairs = pairs.assign(
        score_a=[ui.display_value("draco_score", v) for v in pairs["value_a"]],
        score_b=[ui.display_value("draco_score", v) for v in pairs["value_b"]],
        diff_points=[ui.display_value("draco_score", v) for v in pairs["diff"]],
        lineage_a=[lineage(run_a, lane_a, regime_a, i) for i in pairs["item_id"]],
        lineage_b=[lineage(run_b, lane_b, regime_b, i) for i in pairs["item_id"]],
    )
    columns = {
        "position": "#",
        "item_id": "Task",
        "domain": "Domain",
        "result": "A vs B",
        "score_a": num("Score A", format="%.1f"),
        "score_b": num("Score B", format="%.1f"),
        "diff_points": num("A − B", format="%+.1f"),
        "status_a": "Status A",
        "status_b": "Status B",
        "lineage_a": st.column_config.LinkColumn("Lineage A", display_text="open"),
        "lineage_b": st.column_config.LinkColumn("Lineage B", display_text="open"),
    }

st.subheader("Per item")
only = st.radio(
    "Show",
    ["every item", "differences only"],
    horizontal=True,
    key=f"cmp_{family}_only",
)
table = pairs if only == "every item" else pairs[pairs["result"].isin(["win", "loss"])]
ui.dataframe(table, hide_index=True, column_order=list(columns), column_config=columns)
