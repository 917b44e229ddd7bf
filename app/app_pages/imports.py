"""Other harnesses' results (docs/imports.md). SimpleQA imports (`bench import qa-results`) beside
every lane of ours that answered the same questions, and each file's own header figures beside
our recomputation. DRACO (`bench import draco-results`): each imported file's leaderboard with
our recomputation next to the file's own published figure and the difference, the file's own
latency and cost, every published figure checked one by one, and the imported regime beside our
own re-judging of the same system's reports.

Imported verdicts are the file's judge, "imported, not judged here": they form their own
regime, ranked only among rows of that same imported regime, never with ours.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app import charts, data, ui
from app.data import compare

IMPORT_HOW_TO = (
    "Import a results file with `bench import draco-results FILE --format valyu|nimble|csv "
    "--system NAME` (docs/imports.md); re-judge its reports with `bench rejudge RUN --judge "
    "offline`. Then reload this page."
)

QA_IMPORT_HOW_TO = (
    "Import a SimpleQA results file with `bench import qa-results FILE --format "
    "nimble|simple-evals|csv|jsonl|inspect --lane NAME` (docs/imports.md)."
)


def num(label: str, digits: int = 1, help: str | None = None):
    return st.column_config.NumberColumn(label, format=f"%.{digits}f", help=help)


def x100(series: pd.Series) -> pd.Series:
    return pd.to_numeric(series, errors="coerce").astype(float) * 100


def ids_text(ids) -> str:
    """A list column (DuckDB lists arrive as arrays; NULL as None) as text, '–' when empty."""
    values = [] if ids is None or isinstance(ids, float) else list(ids)
    return ", ".join(map(str, values)) or "–"


st.title("Imported results")
ui.require_snapshot()

# --- SimpleQA imports beside our own lanes, on the questions both answered ------------------

beside = compare.qa_imports_beside(None, None)
if not beside.empty:
    st.subheader("Imported QA results beside your lanes")
    st.caption(
        "Each imported SimpleQA file next to every lane of every other run that answered some "
        "of its questions (joined by the dataset's item id), each pair on exactly the "
        "questions both have. Strict accuracy = correct / shared questions. Win/loss per "
        "question and the paired test: Compare."
    )
    for (run_id, lane, grader_id), rows in beside.groupby(
        ["import_run_id", "import_lane", "import_grader_id"], sort=True
    ):
        st.markdown(f"**{ui.md_escape(lane)}** (import {ui.md_escape(run_id)})")
        st.warning(
            ui.md_escape(
                f"Imported, not graded here: labels of the file's own grader (regime "
                f"{grader_id}). A lane of ours under another grader is compared across regimes."
            )
        )
        import_side = compare.side_key(run_id, lane, grader_id)
        ui.dataframe(
            pd.DataFrame(
                {
                    "Run": rows["run_id"],
                    "Lane": rows["lane"],
                    "Source": ["imported" if bool(i) else "run" for i in rows["imported"]],
                    "Grader regime": rows["grader_id"],
                    "Shared questions": rows["n_shared"],
                    "Lane accuracy": rows["strict_accuracy"],
                    "Import accuracy": rows["import_strict_accuracy"],
                    "Compare": [
                        "run_compare?"
                        + urlencode(
                            {"family": "qa", "a": import_side, "b": compare.side_key(r, o, g)}
                        )
                        for r, o, g in zip(
                            rows["run_id"], rows["lane"], rows["grader_id"], strict=True
                        )
                    ],
                }
            ),
            hide_index=True,
            column_config={
                "Lane": ui.system_column(ui.QA_SYSTEM_HELP),
                "Lane accuracy": ui.metric_column(
                    "qa_strict_accuracy", "Lane accuracy (shared)", "This lane, shared questions."
                ),
                "Import accuracy": ui.metric_column(
                    "qa_strict_accuracy", "Import accuracy (shared)", "The import, same questions."
                ),
                "Compare": st.column_config.LinkColumn("Compare", display_text="per question"),
            },
            key=f"imports_qa_{run_id}_{lane}_{grader_id}",
        )

# --- SimpleQA files' own header figures beside our recomputation -----------------------------

qa_figures = data.qa_published_figures()
if qa_figures is not None and not qa_figures.empty:
    st.subheader("Every published QA figure, reproduced")
    st.caption(
        "The figures an imported QA file publishes in its header (simple-evals score / "
        "metrics, an inspect log's scorer metrics), 0–1, beside the QA leaderboard's "
        "recomputation from the file's own rows under the file's grader regime. Difference = "
        "ours − published. CSV, JSONL and Nimble files publish no header figures."
    )
    qa_files = qa_figures[["run_id", "lane", "grader_id", "source_format"]].drop_duplicates()
    qa_labels = {
        (r.run_id, r.lane, r.grader_id): f"{r.lane} · {r.source_format} · {r.run_id} · "
        f"{r.grader_id}"
        for r in qa_files.itertuples()
    }
    qa_run, qa_lane, qa_grader = st.selectbox(
        "QA file", list(qa_labels), format_func=qa_labels.get, key="imported_qa_file"
    )
    rows = qa_figures[
        (qa_figures["run_id"] == qa_run)
        & (qa_figures["lane"] == qa_lane)
        & (qa_figures["grader_id"] == qa_grader)
    ]
    qa_matched = int(rows["matches_4dp"].sum())
    st.metric("QA figures reproduced to 4 decimals", f"{qa_matched} of {len(rows)}")
    ui.dataframe(
        pd.DataFrame(
            {
                "Metric": [ui.QA_ANSWER_METRIC_LABELS.get(m, m) for m in rows["metric"]],
                "Published as": rows["published_as"].str.removeprefix("$."),
                "Published": rows["published_value"],
                "Ours": rows["recomputed_value"],
                "Difference": rows["difference"],
                "Matches": rows["matches_4dp"].map({True: "yes", False: "NO"}),
                "Questions": rows["n_questions"],
            }
        ),
        hide_index=True,
        column_config={
            "Published as": st.column_config.TextColumn(
                "Published as", help="The key of the file's header"
            ),
            "Published": num("Published", 4, help="The file's own figure, 0–1"),
            "Ours": num("Ours", 4, help="qa_leaderboard, recomputed from the file's rows"),
            "Difference": num("Difference", 4, help="ours − published"),
            "Matches": st.column_config.TextColumn(
                "Matches", help="Equal to 4 decimals on the 0–1 scale"
            ),
        },
        key="imported_qa_figures",
    )

board = data.imported_draco_leaderboard()
if board is None or board.empty:
    if beside.empty and (qa_figures is None or qa_figures.empty):
        ui.stop_with(
            "The snapshot has no imported results yet (or none sharing questions with a run of "
            "yours). " + QA_IMPORT_HOW_TO + " " + IMPORT_HOW_TO
        )
    ui.stop_with("The snapshot has no imported DRACO results yet. " + IMPORT_HOW_TO)

st.caption(
    "Scores are DRACO scores × 100 (0–1 in the marts). Difference = our recomputation from the "
    "file's own verdicts − the figure the file publishes, under the file's aggregation rules; "
    "0.0 means the file's number is reproduced."
)


st.subheader("Imported leaderboards")
for judge_id, rows in board.groupby("judge_id", sort=True):
    first = rows.iloc[0]
    st.warning(
        ui.md_escape(
            f"Imported, not judged here: verdicts of {first['judge_model'] or 'an unnamed judge'} "
            f"(regime {judge_id}), as the file recorded them. Ranked only among systems of this "
            "imported regime; not comparable with our judges' scores."
        )
    )
    table = pd.DataFrame(
        {
            "Rank": rows["rank_score"],
            "System": rows["lane"],
            "Score (ours)": x100(rows["score_mean"]),
            "Score (published)": x100(rows["published_score"]),
            "Difference": x100(rows["score_difference"]),
            "Pass rate (ours)": x100(rows["pass_rate_mean"]),
            "Pass rate (published)": x100(rows["published_pass_rate"]),
            "Pass-rate difference": x100(rows["pass_rate_difference"]),
            "Score, every task": x100(rows["score_mean_all_tasks"]),
            "Items in file": rows["n_items"],
            "Scored": rows["n_scored"],
            "Errored": rows["n_failed"],
            "Tasks absent": rows["n_absent"],
            "Unmatched ids": [ids_text(v) for v in rows["unmatched_ids"]],
            "Mean latency (s)": rows["latency_mean_s"],
            "Published latency (s)": rows["published_latency_mean_s"],
            "Mean cost ($/task)": rows["cost_mean_usd"],
            "Tasks costed": rows["n_items_costed"],
            "File": rows["file_name"],
            "sha256": [ui.short(s, 12) for s in rows["file_sha256"]],
        }
    )
    ui.dataframe(
        table,
        hide_index=True,
        column_config={
            "Rank": st.column_config.NumberColumn(
                "Rank", help="By our recomputed score, within this imported regime."
            ),
            "Score (ours)": num(
                "Score (ours)", help="Mean item score recomputed from the verdicts"
            ),
            "Score (published)": num("Score (published)", help="The file's overall_score"),
            "Difference": num("Difference", 4, help="ours − published, points"),
            "Pass rate (ours)": num("Pass rate (ours)"),
            "Pass rate (published)": num("Pass rate (published)"),
            "Pass-rate difference": num("Pass-rate difference", 4),
            "Score, every task": num(
                "Score, every task",
                help="Our rule: every DRACO task counts, one the file lacks at 0.0",
            ),
            "Tasks absent": st.column_config.NumberColumn(
                "Tasks absent", help="DRACO tasks the file has no record for"
            ),
            "Unmatched ids": st.column_config.TextColumn(
                "Unmatched ids", help="Ids in the file that are no DRACO task (not dropped)"
            ),
            "Mean latency (s)": num("Mean latency (s)"),
            "Published latency (s)": num("Published latency (s)"),
            "Mean cost ($/task)": st.column_config.NumberColumn(
                "Mean cost ($/task)",
                format="$%.4f",
                help="The file's own per-task report cost (imported: the harness's figure, not "
                "a bill or a price of ours), averaged over the tasks that state one",
            ),
            "Tasks costed": st.column_config.NumberColumn(
                "Tasks costed",
                help="Tasks whose cost the file states; a task without one is not counted free",
            ),
            "sha256": st.column_config.TextColumn("sha256", help="Of the imported file"),
        },
        key=f"imported_board_{judge_id}",
    )

st.subheader("Every published figure, reproduced")
files = board[["run_id", "lane", "judge_id", "file_name"]].drop_duplicates()
labels = {
    (r.run_id, r.lane, r.judge_id): f"{r.lane} · {r.file_name} · {r.judge_id}"
    for r in files.itertuples()
}
chosen = st.selectbox("File", list(labels), format_func=labels.get, key="imported_file")
figures = data.published_figures(*chosen)
if figures.empty:
    st.info("This file publishes no header figures (e.g. Nimble or CSV results).")
else:
    matched = int(figures["matches_4dp"].sum())
    st.metric("Reproduced to 4 decimals", f"{matched} of {len(figures)}")
    ui.dataframe(
        pd.DataFrame(
            {
                "Scope": [
                    "overall" if s == "overall" else f"domain: {v}"
                    for s, v in zip(figures["scope"], figures["scope_value"], strict=True)
                ],
                "Metric": figures["metric"].map({"score": "score", "pass_rate": "pass rate"}),
                "Published": x100(figures["published_value"]),
                "Ours": x100(figures["recomputed_value"]),
                "Difference": x100(figures["difference"]),
                "Matches": figures["matches_4dp"].map({True: "yes", False: "NO"}),
                "Items": figures["n_items"],
            }
        ),
        hide_index=True,
        column_config={
            "Published": num("Published", 2),
            "Ours": num("Ours", 2),
            "Difference": num("Difference", 4, help="ours − published, points"),
            "Matches": st.column_config.TextColumn(
                "Matches", help="Equal to 4 decimals on the 0–1 scale"
            ),
        },
        key="imported_figures",
    )

st.subheader("Imported verdicts vs our judging")
comparison = data.regime_comparison()
if comparison is None or comparison.empty:
    st.info(
        "No system here has both an imported regime and one of ours. Import the file's reports "
        "(the valyu inference .jsonl) and re-judge them with `bench rejudge RUN --judge offline`."
    )
else:
    st.caption(
        "Side by side, never one ranking: the judges differ. Both scores count every DRACO task "
        "(a task without a report or record at 0.0). Difference = ours − imported."
    )
    ui.dataframe(
        pd.DataFrame(
            {
                "System": comparison["lane"],
                "Imported regime": [
                    f"{model or judge} (imported, not judged here)"
                    for model, judge in zip(
                        comparison["imported_judge_model"],
                        comparison["imported_judge_id"],
                        strict=True,
                    )
                ],
                "Imported score": x100(comparison["imported_score_mean"]),
                "Our judge": comparison["our_judge_id"],
                "Official": comparison["our_judge_official"].map({True: "yes", False: "no"}),
                "Our score": x100(comparison["our_score_mean"]),
                "Difference": x100(comparison["score_difference"]),
                "Our tasks scored": comparison["our_n_scored"],
                "Our run": comparison["our_run_id"],
            }
        ),
        hide_index=True,
        column_config={
            "Imported score": num("Imported score"),
            "Our score": num("Our score"),
            "Difference": num("Difference", 1, help="ours − imported, points"),
            "Official": st.column_config.TextColumn(
                "Official", help="Whether our judge regime is an official DRACO judge"
            ),
        },
        key="regime_comparison",
    )
    long = pd.concat(
        [
            pd.DataFrame(
                {
                    "system": comparison["lane"],
                    "regime": "imported: " + comparison["imported_judge_id"].astype(str),
                    "score": comparison["imported_score_mean"].astype(float),
                }
            ).drop_duplicates(),
            pd.DataFrame(
                {
                    "system": comparison["lane"],
                    "regime": "ours: " + comparison["our_judge_id"].astype(str),
                    "score": comparison["our_score_mean"].astype(float),
                }
            ).drop_duplicates(),
        ],
        ignore_index=True,
    )
    st.markdown("**Score per system under each regime** (0–1)")
    st.altair_chart(
        charts.grouped_bars(long, group="system", label="regime", value="score", title="score"),
        width="stretch",
    )
