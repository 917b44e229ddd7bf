"""Extraction leaderboard of one dataset: composite, its weights, and the shingle metrics ± std."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import data, ui

st.title("Extraction leaderboard")
ui.require_snapshot()

datasets = data.list_datasets()
if datasets.empty:
    ui.stop_with(
        "The snapshot has no extraction leaderboard rows yet. Run `bench demo` (or finish a run "
        "and `bench publish`), then reload this page."
    )

labels = {
    row.dataset_sha256: f"{row.dataset_name} · {ui.short(row.dataset_sha256)} · "
    f"{row.n_runs} run(s), {row.n_systems} system(s)"
    for row in datasets.itertuples()
}
dataset_sha256 = st.selectbox("Dataset", list(labels), format_func=lambda d: labels.get(d, d))
board = data.leaderboard(dataset_sha256)
if board.empty:
    ui.stop_with("This dataset has no leaderboard rows in the current snapshot.")

multiple_runs = board["run_id"].nunique() > 1
table = pd.DataFrame(
    {
        "Rank": board["rank_composite"],
        "System": board["system"],
        "Version": board["system_version"],
        "Run": board["run_id"],
        "Composite": board["composite"],
        "Shingle F1": [
            ui.fmt_pm(m, s)
            for m, s in zip(board["shingle_f1"], board["shingle_f1_std"], strict=True)
        ],
        "Precision": [
            ui.fmt_pm(m, s)
            for m, s in zip(board["shingle_precision"], board["shingle_precision_std"], strict=True)
        ],
        "Recall": [
            ui.fmt_pm(m, s)
            for m, s in zip(board["shingle_recall"], board["shingle_recall_std"], strict=True)
        ],
        "Accuracy": [
            ui.fmt_pm(m, s)
            for m, s in zip(board["shingle_accuracy"], board["shingle_accuracy_std"], strict=True)
        ],
        "Completeness": board["completeness"],
        "Useful success": board["useful_success_rate"],
        "Token F1": board["token_f1"],
        "Latency score": board["latency_score"],
        "Throughput score": board["throughput_score"],
        "p95 latency (s)": board["latency_p95_s"],
        "Avg bytes": board["avg_output_bytes"],
        "Items": board["n_items"],
        "Failed": board["n_failed"],
    }
)
weight_columns = {
    "w_completeness": "Completeness",
    "w_success": "Useful success",
    "w_f1": "Token F1",
    "w_latency": "Latency score",
    "w_throughput": "Throughput score",
}
weight_sets = board[["run_id", *weight_columns, "useful_success_threshold"]].drop_duplicates(
    subset=[*weight_columns, "useful_success_threshold"]
)
single_weights = weight_sets.iloc[0] if len(weight_sets) == 1 else None


def score_column(name: str, weight: str | None = None, digits: int = 3):
    """A number column; a composite component's header carries its weight."""
    label = name
    if weight and single_weights is not None:
        label = f"{name} ×{float(single_weights[weight]):.2f}"
    return st.column_config.NumberColumn(label, format=f"%.{digits}f")


st.dataframe(
    table,
    hide_index=True,
    column_order=[c for c in table.columns if c != "Run" or multiple_runs],
    column_config={
        "Completeness": score_column("Completeness", "w_completeness"),
        "Useful success": score_column("Useful success", "w_success"),
        "Token F1": score_column("Token F1", "w_f1"),
        "p95 latency (s)": score_column("p95 latency (s)", digits=2),
        "Avg bytes": score_column("Avg bytes", digits=0),
        "Latency score": score_column("Latency score", "w_latency"),
        "Throughput score": score_column("Throughput score", "w_throughput"),
        "Composite": score_column("Composite"),
    },
)

weights_col, threshold_col = st.columns([5, 1])
with weights_col:
    st.markdown("**Composite weights**")
    if single_weights is not None:
        st.dataframe(
            pd.DataFrame(
                [{label: float(single_weights[c]) for c, label in weight_columns.items()}]
            ),
            hide_index=True,
            column_config={
                label: st.column_config.NumberColumn(format="%.2f")
                for label in weight_columns.values()
            },
        )
    else:
        st.caption("Runs of this dataset were scored with different weights:")
        st.dataframe(
            weight_sets.rename(
                columns={**weight_columns, "useful_success_threshold": "Threshold", "run_id": "Run"}
            ),
            hide_index=True,
        )
with threshold_col:
    if single_weights is not None:
        st.metric("Useful-success threshold", ui.fmt(single_weights["useful_success_threshold"], 2))

seeds = board[["bootstrap_samples", "bootstrap_seed"]].drop_duplicates()
bootstrap = "; ".join(
    f"{int(row.bootstrap_samples)} bootstrap resamples of pages, seed {int(row.bootstrap_seed)}"
    for row in seeds.itertuples()
    if ui.is_number(row.bootstrap_samples) and ui.is_number(row.bootstrap_seed)
)
st.caption(
    ui.md_escape(
        f"± = standard deviation over {bootstrap or 'bootstrap resamples (seed not recorded)'}. "
        "Composite = Σ weight × component; latency score = exp(−p95 / scale), "
        "throughput score = min(avg bytes / 100 KB, 1); useful success counts a page only if its "
        "completeness reaches the threshold."
    )
)

st.subheader("Top system")
top = board.iloc[0]
st.text(f"{top['system']} {top['system_version']} · run {top['run_id']}")
metrics = st.columns(6)
metrics[0].metric("Composite", ui.fmt(top["composite"]))
metrics[1].metric(
    "Shingle F1", ui.fmt(top["shingle_f1"]), help="± " + ui.fmt(top["shingle_f1_std"])
)
metrics[2].metric("Completeness", ui.fmt(top["completeness"]))
metrics[3].metric("Useful success", ui.fmt(top["useful_success_rate"]))
metrics[4].metric("Token F1", ui.fmt(top["token_f1"]))
metrics[5].metric("p95 latency (s)", ui.fmt(top["latency_p95_s"], 2))

st.subheader("Composite by system")
chart = pd.DataFrame(
    {
        "system": [
            f"{s} ({ui.short(r, 8)})" if multiple_runs else str(s)
            for s, r in zip(board["system"], board["run_id"], strict=True)
        ],
        "composite": board["composite"].astype(float),
    }
)
st.bar_chart(chart, x="system", y="composite", horizontal=True, sort="-composite")
