"""Deep-research (DRACO) leaderboard of one run: one table per judge regime, never mixed.

Headline: overall score and factual accuracy × 100 (how DRACO quotes them), then the other three
rubric axes, pass rate, the bootstrap CI, item counts (failed and missing items score 0.0),
flagged judge samples, MEAN latency, cost per task with its basis, and the regime (judge model,
samples, official flag). Per regime: the per-domain table and the paired lane-vs-lane tests.

Deep-linkable: `draco_leaderboard?run=<run_id>` (optionally `&judge=<judge_id>` to show one
regime only).
"""

from __future__ import annotations

import math
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app import charts, data, ui, whatif

st.title("Deep research leaderboard (DRACO)")
ui.require_draco_snapshot()

run_id = ui.pick_draco_run("draco_board")
judges = data.draco_judges(run_id)
if judges.empty:
    ui.stop_with("This run has no judged leaderboard rows.")
judge_rows = {row["judge_id"]: row for row in judges.to_dict(orient="records")}
wanted = st.query_params.get("judge")
if wanted is not None and wanted not in judge_rows:
    st.warning("The linked judge regime is not in this run; showing every regime.")
shown = [wanted] if wanted in judge_rows else list(judge_rows)

st.caption(
    "Scores are DRACO item scores × 100: clamp(Σ w·v / Σ positive w, 0, 1) per task, v = share "
    "of judge samples that found the criterion met; failed and missing tasks count 0.0 and "
    "stay in n. Each judge regime has its own table: scores of different regimes are not "
    "comparable and are never ranked together."
)


SCORE = ui.METRIC_SCALES["draco_score"]


def points(board: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """`board` with the score columns on the DRACO display scale (what tables, charts and the
    what-if panel all show)."""
    return board.assign(**{c: ui.display_series("draco_score", board[c]) for c in columns})


def lineage_link(lane: str, judge_id: str) -> str:
    return "draco_lineage?" + urlencode({"run": run_id, "judge": judge_id, "lane": lane})


def num(label: str, digits: int = 1, help: str | None = None):
    return st.column_config.NumberColumn(label, format=f"%.{digits}f", help=help)


def leaderboard_table(board: pd.DataFrame, judge_id: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Rank": board["rank_score"],
            "System": board["lane"],
            "Provider": board["provider"],
            "Score": ui.display_series("draco_score", board["score_mean"]),
            "Factual accuracy": ui.display_series(
                "draco_factual_accuracy", board["factual_accuracy_mean"]
            ),
            "CI (score)": [
                ui.metric_ci_text("draco_score", lo, hi)
                for lo, hi in zip(board["score_ci_low"], board["score_ci_high"], strict=True)
            ],
            "Breadth & depth": ui.display_series(
                "draco_breadth", board["breadth_and_depth_of_analysis_mean"]
            ),
            "Presentation": ui.display_series(
                "draco_presentation", board["presentation_quality_mean"]
            ),
            "Citation": ui.display_series("draco_citation", board["citation_quality_mean"]),
            "Pass rate": ui.display_series("draco_pass_rate", board["pass_rate_mean"]),
            "n": board["n_items"],
            "Scored": board["n_scored"],
            "Failed": board["n_failed"],
            "Incomplete": board["n_incomplete"],
            "Missing": board["n_missing"],
            "Flagged samples": board["n_unparsed_samples"] + board["n_failed_samples"],
            "Retried samples": board["n_retried_samples"],
            "Mean latency (s)": board["latency_mean_s"],
            "Cost per task ($)": board["cost_mean_usd"],
            "Cost basis": board["cost_basis"],
            "Price date": [ui.date_text(d) for d in board["price_snapshot_date"]],
            "Lineage": [lineage_link(lane, judge_id) for lane in board["lane"]],
        }
    )


LEADERBOARD_COLUMNS = {
    "Score": ui.metric_column("draco_score"),
    "Factual accuracy": ui.metric_column("draco_factual_accuracy"),
    "CI (score)": st.column_config.TextColumn(
        "CI (score)", help="seeded percentile bootstrap 95 % interval over tasks, × 100"
    ),
    "Breadth & depth": ui.metric_column("draco_breadth"),
    "Presentation": ui.metric_column("draco_presentation"),
    "Citation": ui.metric_column("draco_citation"),
    "Pass rate": ui.metric_column("draco_pass_rate"),
    "Flagged samples": st.column_config.NumberColumn(
        "Flagged samples",
        help="unparsed + failed judge samples (scored as the verdict least favourable to the "
        "system)",
    ),
    "Mean latency (s)": num(
        "Mean latency (s)", 1, help="MEAN wall clock submit → result (polling included)"
    ),
    "Cost per task ($)": st.column_config.NumberColumn("Cost per task ($)", format="$%.4f"),
    "Lineage": st.column_config.LinkColumn("Lineage", display_text="open"),
}

DOMAIN_COLUMNS = {
    "lane": "System",
    "domain": "Domain",
    "n_items": "n",
    "n_scored": "Scored",
    "n_failed": "Failed",
    "n_incomplete": "Incomplete",
    "n_missing": "Missing",
    "score_points": ui.metric_column("draco_score"),
    "factual_points": ui.metric_column("draco_factual_accuracy"),
    "pass_rate_points": ui.metric_column("draco_pass_rate"),
}


def significance_table(rows: pd.DataFrame, key: str) -> None:
    ui.dataframe(
        points(rows, "mean_a", "mean_b", "mean_diff"),
        hide_index=True,
        column_order=[
            "lane_a",
            "lane_b",
            "n_pairs",
            "mean_a",
            "mean_b",
            "mean_diff",
            "t_stat",
            "p_ttest",
            "p_ttest_adjusted",
            "wilcoxon_stat",
            "p_wilcoxon",
            "p_wilcoxon_adjusted",
            "correction",
            "family_size",
            "significant",
            "direction",
        ],
        column_config={
            "lane_a": "System A",
            "lane_b": "System B",
            "n_pairs": "n pairs",
            "mean_a": num("Mean score A", 2),
            "mean_b": num("Mean score B", 2),
            "mean_diff": num("Mean diff (A − B, points)", 2),
            "t_stat": num("t", 3),
            "p_ttest": num("p (t)", 4),
            "p_ttest_adjusted": num("p adj. (t)", 4),
            "wilcoxon_stat": num("W", 1),
            "p_wilcoxon": num("p (Wilcoxon)", 4),
            "p_wilcoxon_adjusted": num("p adj. (Wilcoxon)", 4),
            "correction": "Correction",
            "family_size": "Family size",
            "significant": "Significant",
            "direction": "Direction",
        },
        key=key,
    )


def penalty_floor_whatif(index: int, judge_id: str, board: pd.DataFrame) -> None:
    """The lanes re-ranked under a penalty floor chosen here, by dbt's own formulas."""
    items, criteria = data.draco_whatif_inputs(run_id, judge_id)
    floor_on = st.toggle("Cap every penalty", key=f"draco_floor_on_{index}")
    floor = st.slider(
        "Penalty floor (a weight below it is raised to it)",
        min_value=-500,
        max_value=-1,
        value=-100,
        step=1,
        key=f"draco_floor_{index}",
        disabled=not floor_on,
    )
    chosen_floor = float(floor) if floor_on else None
    formulas = data.scoring_formulas()
    if not formulas:
        st.info("This snapshot predates the published scoring formulas: run `bench build`.")
        return
    what_if = whatif.draco_lane_scores(items, criteria, chosen_floor, formulas)
    merged = points(
        what_if.merge(board[["lane", "score_mean", "rank_score"]], on="lane"),
        "what_if_score",
        "score_mean",
    )
    ui.dataframe(
        merged.rename(
            columns={
                "what_if_rank": "What-if rank",
                "lane": "System",
                "what_if_score": "What-if score",
                "score_mean": "Published score",
                "rank_score": "Published rank",
            }
        )[["What-if rank", "System", "What-if score", "Published score", "Published rank"]],
        hide_index=True,
        column_config={
            "What-if score": ui.metric_column("draco_score", "What-if score"),
            "Published score": ui.metric_column("draco_score", "Published score"),
        },
        key=f"draco_whatif_{index}",
    )
    published_floors = {float(f) for f in board["penalty_floor"].dropna()}
    # several floors in one board cannot be matched: always print the command then
    published_floor = (
        published_floors.pop()
        if len(published_floors) == 1
        else (None if not published_floors else math.nan)
    )
    command = whatif.draco_floor_command(chosen_floor, published_floor)
    if command is None:
        st.caption("These are the published scores: nothing to make official.")
    else:
        st.markdown("Make it official (rebuilds every mart from the stored verdicts):")
        st.code(command, language="bash")


for index, judge_id in enumerate(shown):
    judge = judge_rows[judge_id]
    st.header(f"Judge regime {index + 1} of {len(shown)}", divider=True)
    ui.judge_banner(judge)
    board = data.draco_leaderboard(run_id, judge_id)
    if board.empty:
        st.info("No leaderboard rows for this regime.")
        continue
    best = board.iloc[0]
    metrics = st.columns(5)
    metrics[0].metric("Best score", ui.points(best["score_mean"]))
    metrics[1].metric("Its factual accuracy", ui.points(best["factual_accuracy_mean"]))
    metrics[2].metric("Systems", len(board))
    metrics[3].metric("Tasks", int(board["n_items"].max()))
    metrics[4].metric(
        "Flagged samples", int((board["n_unparsed_samples"] + board["n_failed_samples"]).sum())
    )
    st.text(f"best system: {best['lane']}")
    board_table = leaderboard_table(board, judge_id)
    key_columns = ["Rank", "System", "Lineage", "Score", "CI (score)", "Cost per task ($)"]
    ui.dataframe(
        board_table,
        hide_index=True,
        column_order=[
            *key_columns,
            *(
                c
                for c in board_table.columns
                if c not in key_columns and board_table[c].notna().any()
            ),
        ],
        column_config=LEADERBOARD_COLUMNS,
        key=f"draco_board_{index}",
    )

    left, right = st.columns(2)
    with left:
        st.markdown("**Score with its bootstrap CI**")
        st.altair_chart(
            charts.score_with_ci(
                points(board, "score_mean", "score_ci_low", "score_ci_high"),
                label="lane",
                score="score_mean",
                low="score_ci_low",
                high="score_ci_high",
                title=SCORE.axis_title,
                domain=SCORE.domain,
            ),
            width="stretch",
            key=f"draco_ci_chart_{index}",
        )
    with right:
        costed = board.dropna(subset=["cost_mean_usd"])
        st.markdown("**Cost vs score** (dashed: the Pareto frontier)")
        if costed.empty:
            st.caption("No system of this run has a cost (reported or list price).")
        else:
            st.altair_chart(
                charts.cost_quality(
                    points(costed, "score_mean"),
                    label="lane",
                    cost="cost_mean_usd",
                    quality="score_mean",
                    cost_title="$ per task",
                    quality_title=SCORE.axis_title,
                ),
                width="stretch",
                key=f"draco_cost_chart_{index}",
            )

    with st.expander("What if: a penalty floor", expanded=False):
        penalty_floor_whatif(index, judge_id, board)
    seeds = sorted({int(s) for s in board["bootstrap_seed"].dropna()})
    samples = sorted({int(s) for s in board["bootstrap_samples"].dropna()})
    thresholds = sorted({float(t) for t in board["pass_threshold"].dropna()})
    floors = sorted({float(f) for f in board["penalty_floor"].dropna()})
    st.text(
        f"bootstrap seed {', '.join(map(str, seeds)) or '?'} · "
        f"{', '.join(map(str, samples)) or '?'} resamples · pass threshold v ≥ "
        f"{', '.join(f'{t:g}' for t in thresholds) or '?'} · penalty floor "
        f"{', '.join(f'{f:g}' for f in floors) or 'none (as registered)'} · cost = reported "
        "cost, else the research_prices seed (basis per row)"
    )

    st.subheader("By domain")
    domains = data.draco_domains(run_id, judge_id)
    if domains.empty:
        st.info("No domain rows for this regime.")
    else:
        domains = domains.assign(
            score_points=ui.display_series("draco_score", domains["score_mean"]),
            factual_points=ui.display_series(
                "draco_factual_accuracy", domains["factual_accuracy_mean"]
            ),
            pass_rate_points=ui.display_series("draco_pass_rate", domains["pass_rate_mean"]),
        )
        st.markdown(f"**Domain × system** ({SCORE.axis_title})")
        st.altair_chart(
            charts.heatmap(
                domains,
                x="lane",
                y="domain",
                value="score_points",
                title=SCORE.label,
                domain=SCORE.domain,
            ),
            width="stretch",
            key=f"draco_heatmap_{index}",
        )
        ui.dataframe(
            domains,
            hide_index=True,
            column_order=list(DOMAIN_COLUMNS),
            column_config=DOMAIN_COLUMNS,
            key=f"draco_domains_{index}",
        )

    st.subheader("Paired significance (system vs system)")
    significance = data.draco_significance(run_id, judge_id)
    if significance.empty:
        st.info("No paired tests for this regime (one system only).")
    else:
        significance_table(significance, key=f"draco_significance_{index}")
        families = sorted({int(f) for f in significance["family_size"].dropna()})
        corrections = sorted({str(c) for c in significance["correction"].dropna()})
        st.text(
            "Paired over the tasks both systems have (failures at 0.0): Student t-test and "
            "Wilcoxon signed-rank, two-sided; "
            f"{' / '.join(corrections) or '?'} correction over every system pair of this regime "
            f"(family size {', '.join(map(str, families)) or '?'}); significant = adjusted t-test "
            "p < 0.05."
        )
