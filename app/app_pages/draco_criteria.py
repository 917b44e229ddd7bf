"""Criterion explorer of one deep-research run: which rubric criteria split the systems, which
are noisy (a judge's own samples disagree), and which the judge regimes disagree on.

Deep-linkable: `draco_criteria?run=<run_id>` (optionally `&axis=`, `&polarity=`). Requirements
are dataset text and shown in dataframes only.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app import data, ui

ALL = "(all)"

st.title("Deep research criteria")
ui.require_draco_snapshot()

run_id = ui.pick_draco_run("draco_crit")
axis_col, polarity_col = st.columns(2)
with axis_col:
    axis = ui.pick("Axis", [ALL, *data.draco_axes(run_id)], "draco_crit_axis", "axis")
with polarity_col:
    polarity = ui.pick("Polarity", [ALL, "positive", "negative"], "draco_crit_pol", "polarity")

criteria = data.draco_criterion_agreement(
    run_id, None if axis == ALL else axis, None if polarity == ALL else polarity
)
if criteria.empty:
    ui.stop_with("No criteria match these filters.")

judged = criteria[criteria["n_groups"] > 0]
metrics = st.columns(4)
metrics[0].metric("Criteria", len(criteria))
metrics[1].metric("Judged", len(judged))
metrics[2].metric(
    "Split systems", int((pd.to_numeric(criteria["stddev_v"], errors="coerce") > 0).sum())
)
metrics[3].metric(
    "Noisy (samples disagree)",
    int((pd.to_numeric(criteria["noisy_share"], errors="coerce") > 0).sum()),
)
st.caption(
    "v = share of a judge's samples that found the criterion met, per (system, judge regime). "
    "Split = standard deviation across systems of the per-system v (the mean over its judge "
    "regimes); noisy = share of (system, regime) groups whose samples disagree (0 < v < 1); "
    "judge disagreement = share of systems judged by 2+ regimes whose majority verdicts differ."
)

COLUMNS = {
    "position": "#",
    "item_id": "Task",
    "domain": "Domain",
    "criterion_id": "Criterion",
    "axis": "Axis",
    "polarity": "Polarity",
    "weight": st.column_config.NumberColumn("Weight", format="%g", help="weight in effect"),
    "requirement": st.column_config.TextColumn("Requirement", width="large"),
    "n_systems": "Systems",
    "n_judges": "Judges",
    "n_groups": "Groups",
    "n_samples": "Samples",
    "n_flagged_samples": "Flagged samples",
    "mean_v": st.column_config.NumberColumn("Mean v", format="%.3f"),
    "stddev_v": st.column_config.NumberColumn("Std dev of v across systems", format="%.3f"),
    "noisy_share": st.column_config.NumberColumn("Noisy share", format="%.3f"),
    "judge_disagreement_share": st.column_config.NumberColumn("Judge disagreement", format="%.3f"),
}


def table(rows: pd.DataFrame, order: list[str], key: str) -> None:
    ui.dataframe(
        rows,
        hide_index=True,
        column_order=[
            *("position", "criterion_id", "axis", "polarity", "weight"),
            *order,
            *("requirement", "domain", "item_id"),
        ],
        column_config=COLUMNS,
        key=key,
    )


st.subheader("Criteria that split systems")
split = criteria[pd.to_numeric(criteria["stddev_v"], errors="coerce").notna()]
split = split.sort_values(["stddev_v", "position"], ascending=[False, True])
if split.empty:
    st.info("No criterion was judged for two or more systems.")
else:
    table(split, ["stddev_v", "mean_v", "n_systems"], "draco_crit_split")

st.subheader("Noisy criteria (a judge's samples disagree)")
noisy = criteria[pd.to_numeric(criteria["noisy_share"], errors="coerce") > 0]
noisy = noisy.sort_values(["noisy_share", "position"], ascending=[False, True])
if noisy.empty:
    st.info("No criterion has disagreeing samples under these filters.")
else:
    table(noisy, ["noisy_share", "n_groups", "n_samples", "n_flagged_samples"], "draco_crit_noisy")

st.subheader("Across-judge disagreement")
across = criteria[pd.to_numeric(criteria["judge_disagreement_share"], errors="coerce").notna()]
across = across.sort_values(["judge_disagreement_share", "position"], ascending=[False, True])
if across.empty:
    st.info("No system was judged by two or more judge regimes on these criteria.")
else:
    table(across, ["judge_disagreement_share", "n_judges", "mean_v"], "draco_crit_judges")

st.subheader("One criterion, per system and judge regime")
labels = {
    (row.item_id, row.criterion_id): f"{row.position} · {row.criterion_id} ({row.axis})"
    for row in criteria.itertuples()
}
choice = st.selectbox(
    "Criterion", list(labels), format_func=lambda key: labels[key], key="draco_crit_pick"
)
item_id, criterion_id = choice
picked = criteria[(criteria["item_id"] == item_id) & (criteria["criterion_id"] == criterion_id)]
st.text(str(picked["requirement"].iloc[0]))
groups = data.draco_criterion_groups(run_id, item_id, criterion_id)
groups = groups.assign(
    lineage=[
        "draco_lineage?" + urlencode({"run": run_id, "judge": judge, "lane": lane, "item": item_id})
        for lane, judge in zip(groups["lane"], groups["judge_id"], strict=True)
    ]
)
ui.dataframe(
    groups,
    hide_index=True,
    column_order=[
        "lane",
        "judge_id",
        "n_samples",
        "n_samples_expected",
        "n_met",
        "v",
        "split",
        "passed",
        "flagged",
        "weight",
        "lineage",
    ],
    column_config={
        "lane": "System",
        "judge_id": "Judge regime",
        "n_samples": "Samples",
        "n_samples_expected": "Expected",
        "n_met": "Met",
        "v": st.column_config.NumberColumn("v", format="%.3f"),
        "split": "Samples disagree",
        "passed": "Passed",
        "flagged": "Flagged",
        "weight": st.column_config.NumberColumn("Weight", format="%g"),
        "lineage": st.column_config.LinkColumn("Lineage", display_text="open"),
    },
    key="draco_crit_groups",
)
