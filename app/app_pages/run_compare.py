"""Any two sides on the items they share: a side is (run or import, lane, grader/judge regime),
for question answering and deep research, or (run or imported predictions, system) for
extraction. Per-item differences, wins/losses/ties and the paired test (the significance marts'
own function, on a pair no mart precomputed).

Deep-linkable: `run_compare?family=qa|draco&a=<run>|<lane>|<regime>&b=<run>|<lane>|<regime>`,
`run_compare?family=extraction&a=<run>|<system>&b=<run>|<system>`;
`run_compare?family=...&run=<run>[&lane=<lane or system>]` starts side A on that run (and lane).
"""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app import ui
from app.data import compare

FAMILIES = {
    "qa": "Question answering (SimpleQA lanes)",
    "draco": "Deep research (DRACO)",
    "extraction": "Extraction (article pages)",
}
NO_SIDES = {
    "qa": "graded QA answers",
    "draco": "deep-research item scores",
    "extraction": "scored extraction pages",
}

st.title("Compare runs")
ui.require_snapshot()
st.caption(
    "Pick any two sides — a run or an import, one lane or system, one grader or judge regime — "
    "and compare them on the items both have. Same run and regime is the lane-vs-lane view; "
    "two runs of a series is run-over-run change; an import beside a run of ours is their "
    "harness against ours on the same questions (or their extractor's predictions against our "
    "engines on the same pages)."
)

family = ui.pick("Family", list(FAMILIES), "cmp_family", "family", lambda f: FAMILIES[f])
if family == "qa":
    sides = compare.qa_sides().rename(columns={"grader_id": "regime"})
elif family == "draco":
    sides = compare.draco_sides().rename(columns={"judge_id": "regime"})
else:  # extraction scoring is deterministic: no grader or judge regime
    sides = compare.extraction_sides().rename(columns={"system": "lane"}).assign(regime="")
if sides.empty:
    ui.stop_with(f"The snapshot has no {NO_SIDES[family]} to compare yet.")


def side_label(row) -> str:
    where = "import" if bool(row.imported) else "run"
    if family == "extraction":
        version = f" {row.system_version}" if isinstance(row.system_version, str) else ""
        dataset = row.dataset_name if isinstance(row.dataset_name, str) else row.dataset_sha256
        return f"{row.lane}{version} · {where} {row.run_id} · {dataset} · {row.n_items} page(s)"
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
elif family == "draco":
    pairs = compare.draco_cross_compare(run_a, lane_a, regime_a, run_b, lane_b, regime_b)
else:
    pairs = compare.extraction_cross_compare(run_a, lane_a, run_b, lane_b)
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

value_name = {"qa": "Accuracy", "draco": "DRACO score", "extraction": "Page shingle F1"}[family]
UNPAIRED_HELP = {
    "qa": "Shared questions not landed by both sides (QA's pairing rule): not won, lost or tied.",
    "draco": "None in deep research: every shared task is paired, failed and missing at 0.",
    "extraction": (
        "Shared pages a side has no result for yet (missing: the run was interrupted or is "
        "still running): not won, lost or tied. A failed page is a result and scores 0."
    ),
}
metrics = st.columns(6)
metrics[0].metric("A wins", tally.wins, help="A better than B on the item")
metrics[1].metric("B wins", tally.losses, help="B better than A on the item")
metrics[2].metric("Ties", tally.ties)
metrics[3].metric(
    "Unpaired",
    tally.unpaired,
    help=UNPAIRED_HELP[family],
)
metrics[4].metric("Paired items", tally.n_pairs)
metrics[5].metric("Only one side", tally.not_shared, help="Items the other side does not have.")


SCALE = {"qa": "qa_strict_accuracy", "draco": "draco_score", "extraction": "shingle_f1"}[family]
DIFF_FORMAT = {"qa": "%+.4f", "draco": "%+.2f", "extraction": "%+.3f"}
PER_ITEM_VALUE = {"qa": "correct (0/1)", "draco": "item score", "extraction": "page shingle F1"}


def shown(value: float | None) -> str:
    return ui.metric_text(SCALE, value)


st.subheader("The paired test")
test = pd.DataFrame(
    [
        {
            "metric": PER_ITEM_VALUE[family],
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
        "mean_diff": num("Mean diff (A − B)", format=DIFF_FORMAT[family]),
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
if family == "extraction":
    st.caption(
        "Extraction pairs pages by page shingle F1 (2PR / (P + R) of the page's shingle "
        "precision and recall; a failed page scores 0), the benchmark's per-page metric and the "
        "leaderboard's rank by shingle F1. The leaderboard's composite has no per-page value "
        "(p95 latency and throughput are per system), and its shingle F1 is the F1 of the mean "
        "precision and recall, not this mean of page F1s."
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
elif family == "draco":

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
else:

    def page_lineage(run_id: str, system: str, item: str) -> str:
        return "item_lineage?" + urlencode({"run": run_id, "system": system, "item": item})

    def outcome_text(outcome: object, useful: object, error: object) -> str:
        if outcome == "completed":
            return (
                "useful"
                if useful is not None and not pd.isna(useful) and bool(useful)
                else "not useful"
            )
        if outcome == "failed" and isinstance(error, str) and error:
            return f"failed ({error.replace('_', ' ')})"
        return ui.text_or_missing(outcome)

    pairs = pairs.assign(
        outcome_text_a=[
            outcome_text(*cells)
            for cells in zip(pairs["outcome_a"], pairs["useful_a"], pairs["error_a"], strict=True)
        ],
        outcome_text_b=[
            outcome_text(*cells)
            for cells in zip(pairs["outcome_b"], pairs["useful_b"], pairs["error_b"], strict=True)
        ],
        # a link only where the side has the page
        lineage_a=[
            page_lineage(run_a, lane_a, i) if isinstance(o, str) else None
            for i, o in zip(pairs["item_id"], pairs["outcome_a"], strict=True)
        ],
        lineage_b=[
            page_lineage(run_b, lane_b, i) if isinstance(o, str) else None
            for i, o in zip(pairs["item_id"], pairs["outcome_b"], strict=True)
        ],
        page_f1_a=[ui.display_value(SCALE, v) for v in pairs["value_a"]],
        page_f1_b=[ui.display_value(SCALE, v) for v in pairs["value_b"]],
        page_f1_diff=[ui.display_value(SCALE, v) for v in pairs["diff"]],
    )
    f1 = "%.3f"
    page_f1_help = "Page shingle F1, 0–1 (failed = 0; missing = —)."
    columns = {
        "position": "#",
        "url": st.column_config.TextColumn("Page URL", width="large"),
        "result": "A vs B",
        "page_f1_a": ui.metric_column(SCALE, "Page F1 A", page_f1_help),
        "page_f1_b": ui.metric_column(SCALE, "Page F1 B", page_f1_help),
        "page_f1_diff": num("A − B", format="%+.3f"),
        "precision_a": num("Precision A", format=f1),
        "precision_b": num("Precision B", format=f1),
        "recall_a": num("Recall A", format=f1),
        "recall_b": num("Recall B", format=f1),
        "outcome_text_a": "Outcome A",
        "outcome_text_b": "Outcome B",
        "item_id": "Item",
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
