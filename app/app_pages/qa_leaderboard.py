"""QA leaderboard of one run and one grader regime: strict accuracy with its CI, the upstream
aggregates, retrieval and UMBRELA metrics, latency, cost, and the corrected p-value vs the baseline.
An imported run (`bench import qa-results`) shows the file's own latency and cost (basis
"imported"), "—" where the file states none, never a list price of ours.

Deep-linkable: `qa_leaderboard?run=<run_id>&grader=<grader_id>`. Grader regimes are never mixed
in one table (methodology 2.3: grader configurations are not comparable).
"""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app import charts, data, ui, whatif
from app.data import compare

st.title("QA leaderboard")
ui.require_qa_snapshot()

run_id, grader_id, _official = ui.pick_qa_run_and_grader("qa_board", detailed_labels=True)

board = data.qa_leaderboard(run_id, grader_id)
if board.empty:
    ui.stop_with("This run has no leaderboard rows for that grader regime.")
imported_run = bool(board["imported"].any())
run_board = board  # every lane of the run, whatever kind is picked below
if imported_run:
    st.warning(
        "Imported results (`bench import qa-results`): another harness's answers graded by its "
        "own grader. Latency and cost are the file's own per-row figures (basis imported: the "
        "harness timed and paid them, we did not), — where the file states none."
    )

# A vendor's own answer product and our synthesised answers are different kinds of system:
# never ranked in one table (methodology: answer lanes are a separate kind).
answer_lanes = data.qa_answer_lanes(run_id) & set(board["lane"])
KINDS = {
    "synthesised": "Synthesised answers (our synthesiser over each lane's search results)",
    "vendor_answer": "Vendor's own answer (answer lanes, graded by the same grader)",
}
if answer_lanes and answer_lanes != set(board["lane"]):
    kind = st.radio(
        "Lane kind (ranked separately)",
        list(KINDS),
        format_func=KINDS.get,
        horizontal=True,
        key="qa_board_kind",
    )
    in_kind = board["lane"].isin(answer_lanes) == (kind == "vendor_answer")
    board = board[in_kind].reset_index(drop=True)
elif answer_lanes:
    st.caption(KINDS["vendor_answer"] + ".")

baselines = sorted(board["baseline_lane"].dropna().unique().tolist())
baseline = baselines[0] if len(baselines) == 1 else None
price_dates = sorted({ui.date_text(d) for d in board["price_snapshot_date"].dropna()})
metrics = st.columns(5)
metrics[0].metric("Lanes", len(board))
metrics[1].metric("Questions", int(board["n_questions"].max()))
metrics[2].metric("Failed requests", int(board["n_failed"].sum()))
metrics[3].metric("Baseline lane", ui.md_escape(baseline or ", ".join(baselines) or "–"))
metrics[4].metric("Price snapshot", ui.md_escape(", ".join(price_dates) or "–"))


def ci_text(low, high) -> str:
    if not (ui.is_number(low) and ui.is_number(high)):
        return "–"
    return f"{float(low):.3f}–{float(high):.3f}"


def compare_link(lane: str, base: str | None) -> str | None:
    if not base or lane == base:
        return None
    return "qa_compare?" + urlencode({"run": run_id, "grader": grader_id, "a": lane, "b": base})


table = pd.DataFrame(
    {
        "Rank": board["strict_accuracy"].rank(method="min", ascending=False).astype("Int64"),
        "Lane": board["lane"],
        "Questions": board["n_questions"],
        "Landed": board["n_landed"],
        "Failed": board["n_failed"],
        "Failure rate": board["failure_rate"],
        "Strict accuracy": board["strict_accuracy"],
        "CI": [
            ci_text(lo, hi)
            for lo, hi in zip(
                board["strict_accuracy_ci_low"], board["strict_accuracy_ci_high"], strict=True
            )
        ],
        "p adj. vs baseline": board["accuracy_p_adjusted"],
        "vs": [
            "(baseline)" if lane == base else (base or "–")
            for lane, base in zip(board["lane"], board["baseline_lane"], strict=True)
        ],
        "Compare": [
            compare_link(lane, base)
            for lane, base in zip(board["lane"], board["baseline_lane"], strict=True)
        ],
        "is_correct": board["is_correct"],
        "is_incorrect": board["is_incorrect"],
        "is_not_attempted": board["is_not_attempted"],
        "Acc. given attempted": board["accuracy_given_attempted"],
        "F1": board["f1"],
        "NDCG@5": board["ndcg_5"],
        "NDCG@10": board["ndcg_10"],
        "Recall@5": board["recall_5"],
        "Recall@10": board["recall_10"],
        "MRR": board["mrr"],
        "Hit@10": board["hit_10"],
        "LLM hit@10": board["llm_hit_10"],
        "LLM precision@10": board["llm_precision_10"],
        "p50 (ms)": board["latency_p50_ms"],
        "p95 (ms)": board["latency_p95_ms"],
        "Latency source": board["latency_source"].where(board["latency_source"] == "imported"),
        "$/1k queries": board["usd_per_1k"],
        "Run cost ($)": board["run_cost_usd"],
        "Price date": [ui.date_text(d) for d in board["price_snapshot_date"]],
        "Price basis": board["price_basis"],
    }
)


def num(label: str, digits: int = 3, help: str | None = None):
    return st.column_config.NumberColumn(label, format=f"%.{digits}f", help=help)


COST_COLUMNS = {
    "$/1k queries": st.column_config.NumberColumn(
        "$/1k queries",
        format="$%.2f",
        help="list / demo price / override: price per 1,000 queries; imported: 1000 × the mean "
        "of the "
        "costs the file states",
    ),
    "Run cost ($)": st.column_config.NumberColumn(
        "Run cost ($)",
        format="$%.4f",
        help="price × attempted questions; imported: the sum of the costs the file states",
    ),
    "Price basis": st.column_config.TextColumn(
        "Price basis",
        help="list: a vendor's list price; demo price: made up for the offline demo lanes, "
        "which cost nothing; override: set with bench rescore; imported: the file's own "
        "per-row cost (not a bill or a price of ours)",
    ),
}


# Key columns first; columns with no value for any lane (e.g. LLM relevance without a judge)
# are left out rather than shown as empty, except an import's latency and cost: "—" there says
# the file states none.
KEY_COLUMNS = ["Rank", "Lane", "Strict accuracy", "CI", "p adj. vs baseline", "vs", "Compare"]
FIGURE_COLUMNS = ["p50 (ms)", "p95 (ms)", "$/1k queries", "Run cost ($)", "Price basis"]
shown = [
    c
    for c in table.columns
    if c in KEY_COLUMNS or table[c].notna().any() or (imported_run and c in FIGURE_COLUMNS)
]
ui.dataframe(
    table,
    hide_index=True,
    column_order=[*KEY_COLUMNS, *(c for c in shown if c not in KEY_COLUMNS)],
    column_config={
        "Rank": st.column_config.NumberColumn(
            "Rank", help="By strict accuracy; ties share a rank."
        ),
        "Lane": ui.system_column(ui.QA_SYSTEM_HELP),
        "Failure rate": num("Failure rate", help="failed / questions; failures are excluded"),
        "Strict accuracy": num("Strict accuracy", help="correct / graded (landed) questions"),
        "CI": st.column_config.TextColumn("CI", help="bootstrap interval of strict accuracy"),
        "p adj. vs baseline": num("p adj. vs baseline", 4),
        "vs": "Baseline",
        "Compare": st.column_config.LinkColumn("Compare", display_text="vs baseline"),
        "is_correct": num(
            ui.QA_ANSWER_METRIC_LABELS["is_correct"],
            help="share of landed questions graded correct (simple-evals is_correct)",
        ),
        "is_incorrect": num(
            ui.QA_ANSWER_METRIC_LABELS["is_incorrect"],
            help="share graded incorrect (simple-evals is_incorrect)",
        ),
        "is_not_attempted": num(
            ui.QA_ANSWER_METRIC_LABELS["is_not_attempted"],
            help="share graded not attempted (simple-evals is_not_attempted)",
        ),
        "Acc. given attempted": num("Acc. given attempted"),
        "F1": num("F1"),
        "NDCG@5": num("NDCG@5"),
        "NDCG@10": num("NDCG@10"),
        "Recall@5": num("Recall@5"),
        "Recall@10": num("Recall@10"),
        "MRR": num("MRR"),
        "Hit@10": num("Hit@10"),
        "LLM hit@10": num("LLM hit@10", help="share of questions with a top-10 chunk graded ≥ 2"),
        "LLM precision@10": num("LLM precision@10", help="share of top-10 chunks graded ≥ 2"),
        "p50 (ms)": num("p50 (ms)", 0),
        "p95 (ms)": num("p95 (ms)", 0),
        "Latency source": st.column_config.TextColumn(
            "Latency source", help="imported: the file's own per-row latency, not timed here"
        ),
        **COST_COLUMNS,
    },
)

# Imported results (bench import qa-results) on this run's questions, beside its lanes.
beside = compare.qa_imports_beside(None, run_id)
beside = beside[(beside["run_id"] == run_id) & (beside["grader_id"] == grader_id)]
if not beside.empty:
    st.subheader("Imported results on the same questions")
    st.caption(
        "Rows marked imported are another harness's answers graded by its own grader, "
        "never ranked with ours: each is shown with this run's lanes on exactly the questions "
        "both have (strict accuracy = correct / shared questions). Latency and cost are each "
        "side's own over all its questions: the import's as its file states them (basis "
        "imported), — where it states none."
    )
    lanes_board = run_board.set_index("lane")
    for (import_run, import_lane, import_grader), rows in beside.groupby(
        ["import_run_id", "import_lane", "import_grader_id"], sort=True
    ):
        import_side = compare.side_key(import_run, import_lane, import_grader)
        n_shared = int(rows["n_shared"].max())
        import_board = data.qa_leaderboard(import_run, import_grader).set_index("lane")
        figures = pd.concat(
            [import_board.reindex([import_lane]), lanes_board.reindex(rows["lane"])]
        ).reset_index(drop=True)
        ui.dataframe(
            pd.DataFrame(
                {
                    "Lane": [f"{import_lane} (imported)", *rows["lane"]],
                    "Source": [f"import {import_run} · regime {import_grader}"]
                    + ["this run"] * len(rows),
                    "Shared questions": [n_shared, *rows["n_shared"]],
                    "Strict accuracy (shared)": [
                        float(rows["import_strict_accuracy"].iloc[0]),
                        *rows["strict_accuracy"],
                    ],
                    "Compare": [None]
                    + [
                        "run_compare?"
                        + urlencode(
                            {
                                "family": "qa",
                                "a": compare.side_key(run_id, lane, grader_id),
                                "b": import_side,
                            }
                        )
                        for lane in rows["lane"]
                    ],
                    "p50 (ms)": figures["latency_p50_ms"],
                    "$/1k queries": figures["usd_per_1k"],
                    "Run cost ($)": figures["run_cost_usd"],
                    "Price basis": figures["price_basis"],
                }
            ),
            hide_index=True,
            column_config={
                "Lane": ui.system_column(ui.QA_SYSTEM_HELP),
                "Strict accuracy (shared)": ui.metric_column("qa_strict_accuracy"),
                "Compare": st.column_config.LinkColumn("Compare", display_text="vs import"),
                "p50 (ms)": num(
                    "p50 (ms)", 0, help="Over all of the side's questions, not only the shared"
                ),
                **COST_COLUMNS,
            },
            key=f"qa_board_import_{import_run}_{import_lane}_{import_grader}",
        )

st.subheader("Charts")
left, right = st.columns(2)
with left:
    st.markdown("**Strict accuracy with its bootstrap CI**")
    st.altair_chart(
        charts.score_with_ci(
            board,
            label="lane",
            score="strict_accuracy",
            low="strict_accuracy_ci_low",
            high="strict_accuracy_ci_high",
            title="strict accuracy",
        ),
        width="stretch",
    )
with right:
    st.markdown("**Latency p50 / p95 per lane**")
    if board[["latency_p50_ms", "latency_p95_ms"]].isna().all().all():
        st.caption("No latency: no lane here made a search call (e.g. closed book).")
    else:
        st.altair_chart(
            charts.latency(
                board, label="lane", p50="latency_p50_ms", p95="latency_p95_ms", unit="ms"
            ),
            width="stretch",
        )
priced = board.dropna(subset=["usd_per_1k", "strict_accuracy"])
st.markdown("**Cost vs accuracy** (dashed: the Pareto frontier, no lane cheaper and better)")
if priced.empty:
    st.caption(
        "The imported file states no cost."
        if imported_run
        else "No lane of this run has a list price."
    )
else:
    st.altair_chart(
        charts.cost_quality(
            priced,
            label="lane",
            cost="usd_per_1k",
            quality="strict_accuracy",
            cost_title="$ per 1,000 queries",
            quality_title="strict accuracy",
        ),
        width="stretch",
    )


def qa_whatif() -> None:
    """The lanes re-ranked under a threshold and prices chosen here, by dbt's own formulas
    (marts.dim_scoring_formulas) over the published rows."""
    st.caption(
        "Change the values the QA leaderboard was scored with and re-rank instantly, with the "
        "formulas dbt uses: the UMBRELA threshold decides which graded chunks count as relevant "
        "(LLM hit@10, LLM precision@10), a lane's price gives its $/1k and run cost. Strict "
        "accuracy does not depend on either. Nothing is saved: the command below makes it "
        "official."
    )
    formulas = data.scoring_formulas()
    chunks = data.qa_graded_chunks(run_id)
    if chunks is None or not whatif.qa_formulas_published(formulas):
        st.info("This snapshot predates the published scoring formulas: run `bench build`.")
        return
    units = data.qa_whatif_units(run_id, grader_id)
    # the threshold these rows were scored with is stored beside their metrics
    stored = units["relevance_threshold"].dropna()
    published_threshold = float(
        stored.iloc[0] if len(stored) else data.scoring_vars().get("umbrela_threshold", 2)
    )
    has_judge = bool(units["relevance_measured"].any())
    controls, prices_col = st.columns([2, 3])
    with controls:
        threshold = st.slider(
            "UMBRELA relevance threshold (grade ≥)",
            min_value=0,
            max_value=3,
            value=int(published_threshold),
            step=1,
            key="qa_whatif_threshold",
            disabled=not has_judge,
            help="0 = irrelevant … 3 = perfectly relevant; published: "
            + ui.md_escape(f"{published_threshold:g}"),
        )
        rank_labels = {
            "strict_accuracy": "Strict accuracy (the leaderboard's rank)",
            "llm_hit_10": "LLM hit@10",
            "llm_precision_10": "LLM precision@10",
            "usd_per_1k": "$/1k queries (cheapest first)",
        }
        rank_by = st.selectbox(
            "Rank by", list(rank_labels), format_func=rank_labels.get, key="qa_whatif_rank_by"
        )
    with prices_col:
        st.markdown("**$ per 1,000 queries** (empty = no list price)")
        price_inputs = st.columns(3)
        published_prices = {
            lane: (None if pd.isna(price) else float(price))
            for lane, price in zip(board["lane"], board["usd_per_1k"], strict=True)
        }
        chosen_prices = {
            lane: price_inputs[i % 3].number_input(
                ui.md_escape(lane),
                min_value=0.0,
                value=published_prices[lane],
                step=0.5,
                format="%.2f",
                key=f"qa_whatif_price_{lane}",
            )
            for i, lane in enumerate(board["lane"])
        }
    if not has_judge:
        st.caption("This run has no relevance judge: LLM hit@10 and precision@10 are not measured.")
    relevance = whatif.qa_relevance(units, chunks, float(threshold), formulas)
    costs = whatif.qa_costs(board, chosen_prices, published_prices, formulas)
    reranked = whatif.qa_rerank(board, relevance, costs, rank_by)
    ui.dataframe(
        reranked,
        hide_index=True,
        column_order=[
            "what_if_rank",
            "lane",
            rank_by,
            *(c for c in whatif.QA_RANK_BY if c != rank_by),
            "run_cost_usd",
            "published_rank",
        ],
        column_config={
            "what_if_rank": st.column_config.NumberColumn(
                "What-if rank", help=f"By {rank_labels[rank_by]}; ties share a rank."
            ),
            "lane": ui.system_column(ui.QA_SYSTEM_HELP),
            "strict_accuracy": num("Strict accuracy"),
            "llm_hit_10": num("LLM hit@10", help="share of questions with a relevant top-10 chunk"),
            "llm_precision_10": num("LLM precision@10", help="share of top-10 chunks relevant"),
            "usd_per_1k": st.column_config.NumberColumn("$/1k queries", format="$%.2f"),
            "run_cost_usd": st.column_config.NumberColumn("Run cost ($)", format="$%.4f"),
            "published_rank": st.column_config.NumberColumn(
                "Published rank", help="The leaderboard's rank, by strict accuracy."
            ),
        },
        key="qa_whatif_table",
    )
    command = whatif.qa_rescore_command(
        float(threshold), published_threshold, chosen_prices, published_prices
    )
    if command is None:
        st.caption("These are the published values; change one to see the command that applies it.")
    else:
        st.markdown("Make it official (rebuilds the QA marts from the stored events):")
        st.code(command, language="bash")


st.subheader("What if")
qa_whatif()

significance = data.qa_significance(run_id, grader_id)
accuracy_tests = significance[significance["metric"] == "accuracy"]
family = accuracy_tests if not accuracy_tests.empty else significance
corrections = sorted({str(c) for c in family["correction"].dropna()})
family_sizes = sorted({int(f) for f in family["family_size"].dropna()})
seeds = sorted({int(s) for s in board["bootstrap_seed"].dropna()})
bases = sorted({str(b) for b in board["price_basis"].dropna()})
if corrections and family_sizes:
    correction_text = (
        f"{' / '.join(c.capitalize() for c in corrections)} correction over a family of "
        f"{' / '.join(map(str, family_sizes))} comparison(s) (each lane vs the baseline, per metric)"
    )
else:
    correction_text = "no significance rows in the snapshot for this regime"
st.caption(
    ui.md_escape(
        f"p adj. vs baseline = paired Student t-test of per-question accuracy (0/1) against "
        f"the baseline lane {baseline or ', '.join(baselines) or '?'}, on the questions both lanes "
        f"landed, two-sided, alpha 0.05; {correction_text}. Strict accuracy = correct / "
        "(correct + incorrect + not attempted) over landed questions; requests that never "
        "landed are excluded and reported as failure rate and n. CI = bootstrap over questions"
        f"{', seed ' + ', '.join(map(str, seeds)) if seeds else ''}. "
        + (
            "Latency = the file's own per-row latency (imported). Cost = the file's own "
            "per-row cost: $/1k = 1000 × their mean, run cost = their sum (basis "
            f"{', '.join(bases) or 'none: the file states no cost'})."
            if imported_run
            else "Latency = provider round trip inside the rate limiter. Cost = price per "
            "1,000 queries × questions (price snapshot "
            f"{', '.join(price_dates) or '?'}, basis {', '.join(bases) or '?'})."
        )
    )
)

st.subheader("Significance vs baseline, every metric")
if significance.empty:
    st.info("No significance rows for this run and grader regime.")
else:
    ui.significance_table(significance)

st.subheader("Breakdowns")
breakdowns = data.qa_breakdowns(run_id, grader_id)
if breakdowns.empty:
    st.info("No breakdown rows for this run and grader regime.")
for dimension, title in (("topic", "By topic"), ("answer_type", "By answer type")):
    rows = breakdowns[breakdowns["dimension"] == dimension]
    if rows.empty:
        continue
    st.markdown(f"**{title}** (strict accuracy per lane; n = questions)")
    wide = rows.pivot_table(
        index="value", columns="lane", values="strict_accuracy", aggfunc="first", dropna=False
    )
    counts = rows.groupby("value")["n_questions"].max()
    wide.insert(0, "n", counts.reindex(wide.index))
    lanes = [lane for lane in board["lane"] if lane in wide.columns]
    wide = wide[["n", *lanes]].reset_index().rename(columns={"value": dimension})
    ui.dataframe(
        wide,
        hide_index=True,
        column_config={lane: num(lane) for lane in lanes},
        key=f"qa_breakdown_{dimension}",
    )

st.subheader("Per question")
lane = st.selectbox("Lane", board["lane"].tolist(), key="qa_board_lane")
answers = data.qa_lane_answers(run_id, lane, grader_id)
answers = answers.assign(
    lineage=[
        "qa_lineage?" + urlencode({"run": run_id, "lane": lane, "item": item})
        for item in answers["item_id"]
    ]
)
ui.dataframe(
    answers,
    hide_index=True,
    column_order=[
        "sample_order",
        "item_id",
        "lineage",
        "label",
        "outcome",
        "problem",
        "gold_answer",
        "answer",
        "ndcg_10",
        "mrr",
        "llm_hit_10",
        "round_trip_ms",
        "topic",
        "answer_type",
    ],
    column_config={
        "sample_order": "#",
        "item_id": "Item",
        "lineage": st.column_config.LinkColumn("Lineage", display_text="open"),
        "label": "Label",
        "outcome": "Outcome",
        "problem": st.column_config.TextColumn("Question", width="large"),
        "gold_answer": "Gold answer",
        "answer": st.column_config.TextColumn("Answer", width="medium"),
        "ndcg_10": num("NDCG@10"),
        "mrr": num("MRR"),
        "llm_hit_10": num("LLM hit@10"),
        "round_trip_ms": num("Round trip (ms)", 0),
        "topic": "Topic",
        "answer_type": "Answer type",
    },
)
st.caption("Label is empty for questions whose request never landed (failed, not graded).")
