"""Extraction leaderboard of one dataset: composite, its weights, and the shingle metrics ± std."""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app import charts, data, ui, whatif

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
is_seed = bool(board["composite_is_seed"].all())
composite_label = "Seed composite" if is_seed else "Composite (your weights)"

# The boilerplate the seed composite cannot see: token F1 (recall x best-window precision) is 1.0
# for an engine that keeps every cookie banner, so say so when the two rankings disagree.
by_seed = board.sort_values(["rank_seed_composite", "system"]).iloc[0]
best_f1 = board["shingle_f1"].max()
if (
    ui.is_number(by_seed["shingle_f1"])
    and ui.is_number(best_f1)
    and by_seed["shingle_f1"] < best_f1
):
    leaders = board.loc[board["shingle_f1"] == best_f1, "system"].tolist()
    st.info(
        ui.md_escape(
            f"The seed composite ranks {by_seed['system']} first ({by_seed['seed_composite']:.3f}), "
            f"but it keeps extra text: shingle precision {by_seed['shingle_precision']:.3f}, so "
            f"{1 - by_seed['shingle_precision']:.0%} of its output is not in the reference "
            f"(boilerplate). By shingle F1, the benchmark's boilerplate-aware metric, "
            f"{', '.join(leaders)} rank first ({best_f1:.3f}). Weigh shingle terms into the "
            "composite with the what-if panel below."
        )
    )

lineage = [
    "/item_lineage?" + urlencode({"run": r, "system": s})
    for r, s in zip(board["run_id"], board["system"], strict=True)
]
table = pd.DataFrame(
    {
        "Rank": board["rank_composite"],
        "System": board["system"],
        "Lineage": lineage,
        "Composite": board["composite"],
        "CI (composite)": [
            ui.metric_ci_text("extraction_composite", lo, hi)
            for lo, hi in zip(
                board.get("composite_ci_low", pd.Series([None] * len(board))),
                board.get("composite_ci_high", pd.Series([None] * len(board))),
                strict=True,
            )
        ],
        "Shingle F1": [
            ui.fmt_pm(m, s)
            for m, s in zip(board["shingle_f1"], board["shingle_f1_std"], strict=True)
        ],
        "Extra text": 1 - board["shingle_precision"].astype(float),
        "Rank by shingle F1": board["rank_shingle_f1"],
        "Seed composite": board["seed_composite"],
        "Tie": board["tie_note"].fillna(""),
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
        "Version": board["system_version"],
        "Run": board["run_id"],
    }
)
weight_columns = {f"w_{name}": label for name, label in ui.EXTRACTION_WEIGHT_LABELS.items()}
weight_columns = {c: weight_columns.get(c, c[2:]) for c in board.columns if c.startswith("w_")}
weight_sets = board[["run_id", *weight_columns, "useful_success_threshold"]].drop_duplicates(
    subset=[*weight_columns, "useful_success_threshold"]
)
single_weights = weight_sets.iloc[0] if len(weight_sets) == 1 else None


def score_column(name: str, weight: str | None = None, digits: int = 3, help: str | None = None):
    """A number column; a composite component's header carries its weight."""
    label = name
    if weight and single_weights is not None and float(single_weights[weight]):
        label = f"{name} ×{float(single_weights[weight]):.2f}"
    return st.column_config.NumberColumn(label, format=f"%.{digits}f", help=help)


ui.dataframe(
    table,
    hide_index=True,
    column_order=[
        c
        for c in table.columns
        if (c != "Run" or multiple_runs) and (c != "Seed composite" or not is_seed)
    ],
    column_config={
        "Rank": st.column_config.NumberColumn(
            "Rank", help=f"By {composite_label.lower()}; ties share a rank."
        ),
        "Lineage": st.column_config.LinkColumn(
            "Lineage",
            display_text="pages",
            help="Every page of this system: score, events, raw output.",
        ),
        "Composite": score_column(
            composite_label,
            help="Σ weight × component over the weights below"
            + (" (the published seed weights)." if is_seed else " (set by bench rescore)."),
        ),
        "CI (composite)": st.column_config.TextColumn(
            "CI (composite)",
            help="Seeded percentile bootstrap 95 % interval of the composite over the pages.",
        ),
        "Shingle F1": st.column_config.TextColumn(
            "Shingle F1",
            help="Article-extraction-benchmark F1 over word shingles, ± bootstrap std.",
        ),
        "Extra text": st.column_config.ProgressColumn(
            "Extra text kept",
            help="1 − shingle precision: share of the output not in the reference (boilerplate).",
            format="percent",
            min_value=0,
            max_value=1,
        ),
        "Seed composite": score_column("Seed composite", help="The published seed weights."),
        "Tie": st.column_config.TextColumn("Tie", help="Why systems with equal composites differ."),
        "Completeness": score_column("Completeness", "w_completeness"),
        "Useful success": score_column("Useful success", "w_success"),
        "Token F1": score_column("Token F1", "w_f1"),
        "p95 latency (s)": score_column("p95 latency (s)", digits=2),
        "Avg bytes": score_column("Avg bytes", digits=0),
        "Latency score": score_column("Latency score", "w_latency"),
        "Throughput score": score_column("Throughput score", "w_throughput"),
    },
)

weights_col, threshold_col = st.columns([5, 1])
with weights_col:
    st.markdown("**Composite weights**")
    if single_weights is not None:
        ui.dataframe(
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
        ui.dataframe(
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

# The headline is the table's first row: the ranking this page defends is the composite under
# the active weights (the seed weights until `bench rescore --weights` sets others), never a
# second ordering of its own.
st.subheader("Top system")
top = board.iloc[0]
tied = board.loc[board["rank_composite"] == top["rank_composite"], "system"].tolist()
st.text(
    f"{top['system']} {top['system_version']} · run {top['run_id']} · rank "
    f"{ui.text_or_missing(top['rank_composite'])} by the {composite_label.lower()}"
    + (f" (tied with {', '.join(map(str, tied[1:]))})" if len(tied) > 1 else "")
    + f" · {ui.fmt(top['composite'])}, 95 % CI "
    + ui.metric_ci_text(
        "extraction_composite", top.get("composite_ci_low"), top.get("composite_ci_high")
    )
)
by_f1 = board.sort_values(["rank_shingle_f1", "system"]).iloc[0]
if by_f1["system"] != top["system"]:
    st.text(
        f"By shingle F1 (boilerplate-aware) {by_f1['system']} leads with "
        f"{ui.fmt(by_f1['shingle_f1'])}; weigh it in with the what-if panel below to rank by it."
    )
metrics = st.columns(6)
metrics[0].metric(
    "Composite",
    ui.fmt(top["composite"]),
    help=f"{composite_label}: the ranking of the table above.",
)
metrics[1].metric(
    "Shingle F1", ui.fmt(top["shingle_f1"]), help="± " + ui.fmt(top["shingle_f1_std"])
)
metrics[2].metric("Completeness", ui.fmt(top["completeness"]))
metrics[3].metric("Useful success", ui.fmt(top["useful_success_rate"]))
metrics[4].metric("Token F1", ui.fmt(top["token_f1"]))
metrics[5].metric("p95 latency (s)", ui.fmt(top["latency_p95_s"], 2))


def weights_whatif(board: pd.DataFrame) -> None:
    """The systems re-ranked under weights chosen here, by dbt's own composite formula."""
    formulas = data.scoring_formulas()
    if not formulas:
        st.info(
            "This snapshot predates the published scoring formulas: run `bench build` to re-rank."
        )
        return
    names = whatif.weight_names(board)
    active = whatif.active_weights(board)
    sliders = st.columns(4)
    chosen = {
        name: sliders[i % 4].slider(
            weight_columns.get(f"w_{name}", name),
            min_value=0.0,
            max_value=1.0,
            value=float(active[name]),
            step=0.05,
            key=f"whatif_{name}",
        )
        for i, name in enumerate(names)
    }
    try:  # the CLI's validator decides; the panel ranks with exactly what the command sets
        command, chosen = whatif.rescore_plan(chosen)
    except ValueError as refusal:
        command = None
        st.warning(
            ui.md_escape(
                f"bench rescore would refuse these weights ({refusal}). Move the sliders until "
                "they sum to 1 to get a command that makes them official."
            )
        )
    reranked = whatif.rerank(board, chosen, formulas)
    ui.dataframe(
        reranked.rename(
            columns={
                "what_if_rank": "What-if rank",
                "system": "System",
                "what_if_composite": "What-if composite",
                "published_rank": "Published rank",
                "moved": "Moved",
                "run_id": "Run",
            }
        )[["What-if rank", "System", "What-if composite", "Published rank", "Moved", "Run"]],
        hide_index=True,
        column_config={
            "What-if composite": st.column_config.NumberColumn(format="%.3f"),
            "Moved": st.column_config.NumberColumn(help="Places gained (+) or lost (−)."),
        },
    )
    if command is not None:
        st.markdown("Make it official (rebuilds every mart from the stored events):")
        st.code(command, language="bash")


st.subheader("What if")
st.caption(
    "Re-rank this dataset under other weights, instantly, with the formula dbt uses (Σ weight × "
    "component, unmeasured terms 0). Nothing is saved: the command below makes it official."
)
weights_whatif(board)

st.subheader("Charts")
left, right = st.columns(2)
with left:
    f1 = board.assign(
        label=[
            f"{s} ({ui.short(r, 8)})" if multiple_runs else str(s)
            for s, r in zip(board["system"], board["run_id"], strict=True)
        ],
        low=(board["shingle_f1"] - board["shingle_f1_std"].fillna(0)).clip(lower=0),
        high=(board["shingle_f1"] + board["shingle_f1_std"].fillna(0)).clip(upper=1),
    )
    st.markdown("**Shingle F1 ± bootstrap std**")
    st.altair_chart(
        charts.score_with_ci(
            f1, label="label", score="shingle_f1", low="low", high="high", title="shingle F1"
        ),
        width="stretch",
    )
with right:
    st.markdown("**p95 latency per engine**")
    timed = f1.dropna(subset=["latency_p95_s"])
    if timed.empty:
        st.caption("No latency: every row of this dataset is an import.")
    else:
        st.altair_chart(
            charts.latency(timed, label="label", p50=None, p95="latency_p95_s", unit="s"),
            width="stretch",
        )
