"""Repeat-run series: strict accuracy per run index per lane, the per-lane summary (mean, range),
and what may and may not be read from it (methodology 3).

Deep-linkable: `qa_series?series=<name>&grader=<grader_id>`.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app import charts, data, ui
from app.data import compare

st.title("QA series")
ui.require_qa_snapshot()

series_rows = data.qa_series()
if series_rows.empty:
    ui.stop_with(
        "The snapshot has no QA run that belongs to a series. Start one with "
        "`bench run qa --questions demo --series NAME` and repeat it with the same configuration."
    )
series_col, grader_col = st.columns([2, 3])
with series_col:
    series = ui.pick("Series", sorted(set(series_rows["series"])), "qa_series_name", "series")
in_series = series_rows[series_rows["series"] == series]
official = dict(zip(in_series["grader_id"], in_series["grader_official"], strict=True))
with grader_col:
    grader_id = ui.pick(
        "Grader regime",
        list(official),
        "qa_series_grader",
        "grader",
        lambda g: f"{g} ({'official' if official.get(g) else 'non-official'})",
    )
ui.grader_banner(grader_id, official[grader_id])

accuracy = data.series_accuracy(series, grader_id)
summary = data.series_summary(series, grader_id)
if accuracy.empty:
    ui.stop_with("This series has no fct_series_accuracy rows for that grader regime.")

bands = sorted({float(b) for b in summary["noise_band_points"].dropna()}) if len(summary) else []
band = bands[0] if len(bands) == 1 else None
band_text = f"±{band:g}" if band is not None else "±(" + ", ".join(f"{b:g}" for b in bands) + ")"
st.warning(
    ui.md_escape(
        f"Differences within {band_text} points of strict accuracy are not called: that is the "
        "observed run-to-run noise. Run order is confounded with learning by design (lanes that "
        "remember sources may improve across runs): a later run minus an earlier one is learning "
        "plus noise and the two cannot be separated, so the runs are not independent replicates "
        "(no confidence interval across them). Compare lanes at the same run index."
    )
)

metrics = st.columns(3)
metrics[0].metric("Runs", int(accuracy["run_index"].nunique()))
metrics[1].metric("Lanes", int(accuracy["lane"].nunique()))
metrics[2].metric("Noise band (points)", ui.md_escape(band_text))

st.subheader("Strict accuracy per run")
st.altair_chart(
    charts.series_with_band(
        accuracy.assign(run_index=accuracy["run_index"].astype(int)),
        x="run_index",
        y="strict_accuracy",
        lane="lane",
        band_points=bands[0] if bands else 0.0,
    ),
    width="stretch",
)
st.caption(
    ui.md_escape(
        f"Shaded: {band_text} points around each run; a next run inside it is not a called change."
    )
)


def call(within, delta) -> str:
    if not ui.is_number(delta):
        return "– (first run)"
    if within is None or (not isinstance(within, bool) and pd.isna(within)):
        return "–"
    return f"within {band_text}: not called" if bool(within) else "outside the noise band"


table = pd.DataFrame(
    {
        "Lane": accuracy["lane"],
        "Run index": accuracy["run_index"],
        "Strict accuracy (%)": accuracy["accuracy_points"],
        "Δ vs previous (points)": accuracy["delta_points"],
        "Call": [
            call(w, d)
            for w, d in zip(accuracy["within_noise_band"], accuracy["delta_points"], strict=True)
        ],
        "Run": accuracy["run_id"],
        "Leaderboard": [
            "qa_leaderboard?" + urlencode({"run": r, "grader": grader_id})
            for r in accuracy["run_id"]
        ],
    }
)
ui.dataframe(
    table,
    hide_index=True,
    column_config={
        "Lane": ui.system_column(ui.QA_SYSTEM_HELP),
        "Strict accuracy (%)": st.column_config.NumberColumn(format="%.1f"),
        "Δ vs previous (points)": st.column_config.NumberColumn(format="%+.1f"),
        "Leaderboard": st.column_config.LinkColumn("Leaderboard", display_text="open run"),
    },
    key="qa_series_runs",
)

st.subheader("Summary per lane")
if summary.empty:
    st.info("No series_summary rows for this series and grader regime.")
else:
    ui.dataframe(
        pd.DataFrame(
            {
                "Lane": summary["lane"],
                "Runs": summary["n_runs"],
                "Accuracy per run (%)": [
                    ", ".join(f"{100 * a:.1f}" for a in values) for values in summary["accuracies"]
                ],
                "Mean (%)": summary["mean_accuracy"] * 100,
                "Min (%)": summary["min_accuracy"] * 100,
                "Max (%)": summary["max_accuracy"] * 100,
                "Range (points)": summary["range_points"],
                "Noise band (points)": summary["noise_band_points"],
            }
        ),
        hide_index=True,
        column_config={
            "Lane": ui.system_column(ui.QA_SYSTEM_HELP),
            **{
                c: st.column_config.NumberColumn(format="%.1f")
                for c in ("Mean (%)", "Min (%)", "Max (%)", "Range (points)", "Noise band (points)")
            },
        },
        key="qa_series_summary",
    )
    st.caption(
        "Mean and range describe the runs of the series as they happened; a range within the "
        "noise band means no run-to-run difference can be called for that lane."
    )

# --- run over run, question by question (the compare-runs page's tally and paired test) -----

st.subheader("Run over run, question by question")
changes = compare.series_item_changes(series, grader_id)
if changes.empty:
    st.info("No lane of this series has two runs with answers under this grader regime yet.")
else:
    steps = []
    for (lane, run_index), pairs in changes.groupby(["lane", "run_index"], sort=True):
        tally = compare.paired_tally(pairs)
        first = pairs.iloc[0]
        steps.append(
            {
                "Lane": lane,
                "Run": f"{int(first['previous_run_index'])} → {int(run_index)}",
                "Gained": tally.wins,
                "Lost": tally.losses,
                "Unchanged": tally.ties,
                "Unpaired": tally.unpaired,
                "Net (questions)": tally.wins - tally.losses,
                "p (paired t)": tally.p_ttest,
                "Compare": "run_compare?"
                + urlencode(
                    {
                        "family": "qa",
                        "a": compare.side_key(first["run_id"], lane, grader_id),
                        "b": compare.side_key(first["previous_run_id"], lane, grader_id),
                    }
                ),
            }
        )
    ui.dataframe(
        pd.DataFrame(steps),
        hide_index=True,
        column_config={
            "Lane": ui.system_column(ui.QA_SYSTEM_HELP),
            "Gained": st.column_config.NumberColumn(
                help="Correct in this run, not in the previous one (both landed)."
            ),
            "Lost": st.column_config.NumberColumn(
                help="Correct in the previous run, not in this one (both landed)."
            ),
            "Unpaired": st.column_config.NumberColumn(
                help="Not landed by both runs: neither gained nor lost."
            ),
            "p (paired t)": st.column_config.NumberColumn(format="%.4f"),
            "Compare": st.column_config.LinkColumn("Per question", display_text="compare"),
        },
        key="qa_series_changes",
    )
    st.caption(
        "Each run of a lane against its previous run on the questions both landed; p is the "
        "paired t-test of the significance marts on correct (0/1), uncorrected. It says the "
        "answers changed, not why: learning and noise are confounded (above)."
    )

# --- per vertical and the run-1 view (fct_series_vertical_accuracy, series_run1) -------------

LANE_KINDS = {
    "vendor_answer": "Vendor's own answer (answer lanes)",
    "search": "Synthesised from search results (search lanes)",
    "closed_book": "Closed book (no search)",
}

verticals = data.series_vertical_accuracy(series, grader_id)
run1 = data.series_run1(series, grader_id)
if verticals is None or run1 is None:
    st.info("This snapshot predates the per-vertical series marts; rebuild to see them.")
    st.stop()

confounds = sorted({str(c) for c in run1["order_confound"].dropna()})
if confounds:
    st.warning(ui.md_escape("Order confound: " + "; ".join(confounds) + "."))

st.subheader("Per vertical")
per_vertical = verticals[verticals["vertical"] != "(all)"]
names = sorted(per_vertical["vertical"].unique().tolist())
if not names:
    st.caption("The question set has no topic / vertical column: only the overall curve.")
else:
    st.caption(
        ui.md_escape(
            f"Strict accuracy per run in each vertical, {band_text} points shaded; lanes of "
            "different kinds share a chart but not a rank."
        )
    )
    cells = st.columns(min(len(names), 3))
    for i, vertical in enumerate(names):
        rows = per_vertical[per_vertical["vertical"] == vertical]
        with cells[i % len(cells)]:
            st.markdown(f"**{ui.md_escape(vertical)}** (n = {int(rows['n_attempted'].max())})")
            st.altair_chart(
                charts.series_with_band(
                    rows.assign(run_index=rows["run_index"].astype(int)),
                    x="run_index",
                    y="strict_accuracy",
                    lane="lane",
                    band_points=bands[0] if bands else 0.0,
                ),
                width="stretch",
            )

st.subheader("Run 1 only")
st.caption(
    "For one-shot workloads: accuracy at the first run, ranked only among lanes of the same "
    "kind (a vendor's own answer is never ranked with our synthesised answers). The change "
    "since run 1 is learning + noise and cannot be separated."
)
vertical_options = ["(all)", *names]
chosen_vertical = st.selectbox("Vertical", vertical_options, key="qa_series_run1_vertical")
view = run1[run1["vertical"] == chosen_vertical]
for kind, rows in view.groupby("lane_kind", sort=True):
    st.markdown(f"**{ui.md_escape(LANE_KINDS.get(kind, kind))}**")
    ui.dataframe(
        pd.DataFrame(
            {
                "Rank (run 1)": rows["run1_rank"],
                "Lane": rows["lane"],
                "Run 1 accuracy (%)": rows["run1_accuracy"] * 100,
                "Questions": rows["run1_n_attempted"],
                "Last run": rows["last_run_index"],
                "Last run accuracy (%)": rows["last_accuracy"] * 100,
                "Change since run 1 (points)": rows["change_since_run1"] * 100,
                "Call": [
                    f"within {band_text}: not called" if bool(w) else "outside the noise band"
                    for w in rows["change_within_noise_band"].fillna(True)
                ],
            }
        ),
        hide_index=True,
        column_config={
            "Rank (run 1)": st.column_config.NumberColumn(
                "Rank (run 1)", help="Among lanes of this kind only; ties share a rank."
            ),
            "Lane": ui.system_column(ui.QA_SYSTEM_HELP),
            "Run 1 accuracy (%)": st.column_config.NumberColumn(format="%.1f"),
            "Last run accuracy (%)": st.column_config.NumberColumn(format="%.1f"),
            "Change since run 1 (points)": st.column_config.NumberColumn(
                format="%+.1f", help="Learning + noise: the order confound."
            ),
        },
        key=f"qa_series_run1_{kind}",
    )
