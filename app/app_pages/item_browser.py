"""Item browser: every item of one run × every system, coloured by outcome, each cell a link to
its lineage page; search by question, task or URL text; filters for failures, judge samples
that disagree, systems that disagree; worst first.

Deep-linkable: `item_browser?family=<qa|draco|extraction|live>&run=<run_id>` (`&grader=` for QA,
`&judge=` for deep research, `&q=<search words>`).
Question, task and URL texts are dataset content: shown in dataframes only, never as Markdown.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import data, ui
from app.data import items as item_data
from app.data import live_extraction as live_data

st.title("Item browser")
ui.require_snapshot()


def available_families() -> list[item_data.Family]:
    families: list[item_data.Family] = []
    if data.qa_status().ready and not data.qa_lineage_runs().empty:
        families.append("qa")
    if data.draco_status().ready and not data.draco_runs().empty:
        families.append("draco")
    if not data.lineage_runs().empty:
        families.append("extraction")
    live_runs = live_data.live_runs()  # None when the snapshot predates the live marts
    if live_runs is not None and not live_runs.empty:
        families.append("live")
    return families


families = available_families()
if not families:
    ui.stop_with("The snapshot has no per-item rows yet. Run `bench demo`, then reload this page.")

family_col, run_col, regime_col = st.columns([1, 2, 2])
with family_col:
    family = ui.pick(
        "Benchmark family",
        list(families),
        "items_family",
        "family",
        lambda f: item_data.FAMILIES[f].title,
    )
assert family is not None
info = item_data.FAMILIES[family]


def short_run(run_id: str) -> str:
    return f"run {run_id[:8]}"


def status_text(status: object) -> str:
    return str(status).replace("_", " ") if isinstance(status, str) else "status unknown"


if family == "qa":
    runs = data.qa_lineage_runs()
    run_labels = {
        row.run_id: f"{row.benchmark} · "
        + (f"series {row.series} run {row.run_index} · " if isinstance(row.series, str) else "")
        + f"{status_text(row.status)} · {short_run(row.run_id)}"
        for row in runs.itertuples()
    }
elif family == "draco":
    runs = data.draco_runs()
    run_labels = {
        row.run_id: f"{row.benchmark} · {row.dataset_name or 'dataset unknown'} · "
        f"{row.n_lanes} system(s) · {status_text(row.status)} · {short_run(row.run_id)}"
        for row in runs.itertuples()
    }
elif family == "live":
    runs = live_data.live_runs()
    assert runs is not None
    run_labels = {
        row.run_id: f"{row.engines} engine(s) · ground truth {row.ground_truth} · "
        f"{short_run(row.run_id)}"
        for row in runs.itertuples()
    }
else:
    runs = data.lineage_runs()
    run_labels = {
        row.run_id: f"{row.dataset_name} · {status_text(row.status)} · {short_run(row.run_id)}"
        for row in runs.itertuples()
    }
with run_col:
    run_id = ui.pick("Run", list(run_labels), f"items_{family}_run", "run", run_labels.get)
assert run_id is not None

regime: str | None = None
with regime_col:
    if family == "qa":
        graders = data.qa_graders(run_id)
        official = dict(zip(graders["grader_id"], graders["grader_official"], strict=True))
        regime = ui.pick(
            "Grader regime",
            list(official),
            "items_qa_grader",
            "grader",
            lambda g: f"{g} ({'official' if official.get(g) else 'not official'})",
        )
    elif family == "draco":
        judges = data.draco_judges(run_id)
        judge_official = dict(zip(judges["judge_id"], judges["judge_official"], strict=True))
        regime = ui.pick(
            "Judge regime",
            list(judge_official),
            "items_draco_judge",
            "judge",
            lambda j: f"{j} ({'official' if judge_official.get(j) else 'not official'})",
        )
    elif family == "live":
        st.text("Live extraction has no judge: scores are computed from the engines' consensus.")
    else:
        st.text("Extraction has no judge: scores are computed from the ground truth.")
if family in ("qa", "draco") and regime is None:
    ui.stop_with("This run has no graded rows yet.")

cells = item_data.item_cells(family, run_id, regime)
if cells.empty:
    ui.stop_with("This run has no per-item rows under this regime.")

# --- filters ---------------------------------------------------------------------------------

search_col, spread_col = st.columns([3, 2])
with search_col:
    if "items_search" not in st.session_state:
        st.session_state["items_search"] = st.query_params.get("q", "")
    search = st.text_input(
        f"Search {ui.lower_first(info.item_noun)} text",
        key="items_search",
        placeholder={
            "qa": "a word of the question (or an item id)",
            "draco": "a word of the task (or an item id)",
            "extraction": "part of the URL (or an item id)",
            "live": "part of the URL (or an item id)",
        }[family],
    )
    if search:
        st.query_params["q"] = search
    elif "q" in st.query_params:
        del st.query_params["q"]
with spread_col:
    if info.binary:
        min_spread = 1.0
        st.text("Systems disagree: one system got it right and another did not.")
    else:
        scale = info.score_scale
        min_spread = (
            st.slider(
                f"Systems disagree: best minus worst {info.score_name} at least",
                min_value=0.0,
                max_value=1.0 * scale,
                value=0.2 * scale,
                step=0.05 * scale if scale == 1 else 5.0,
                format="%.2f" if scale == 1 else "%.0f",
                key=f"items_{family}_spread",
            )
            / scale
        )
checks = st.columns(4)
failed_only = checks[0].checkbox(
    "Failures only",
    key="items_failed",
    help={
        "qa": "Questions some system did not answer correctly (incorrect, not attempted, or "
        "the request failed).",
        "draco": "Tasks whose research failed, is missing or is incomplete for some system.",
        "extraction": "Pages some engine failed on, or whose output is not a useful success.",
        "live": "URLs some engine failed on, or whose output is not a useful success.",
    }[family],
)
samples_disagree = checks[1].checkbox(
    "Samples disagree",
    key="items_samples",
    disabled=not info.samples_apply,
    help="Tasks with at least one criterion whose judge samples disagree (0 < v < 1)."
    if info.samples_apply
    else "Not applicable: this family has no judge that takes several samples per item.",
)
systems_disagree = checks[2].checkbox(
    "Systems disagree", key="items_systems", help="Items on which the systems' scores differ."
)
worst_first = checks[3].checkbox(
    "Worst first",
    key="items_worst",
    help=f"Lowest mean {info.score_name} first (mean over the systems, failures at 0).",
)

filters = item_data.ItemFilters(
    search=search,
    failed_only=failed_only,
    samples_disagree=samples_disagree and info.samples_apply,
    systems_disagree=systems_disagree,
    min_spread=min_spread,
    worst_first=worst_first,
)
summary = item_data.item_summary(cells, filters.min_spread)
shown = item_data.filter_items(summary, filters)

systems = sorted(cells["system"].unique())
metrics = st.columns(5)
metrics[0].metric("Items shown", f"{len(shown)} of {len(summary)}")
metrics[1].metric("Systems", len(systems))
metrics[2].metric("Items some system failed", int(summary["any_failed"].sum()))
metrics[3].metric(
    "Items whose samples disagree",
    int(summary["samples_disagree"].sum()) if info.samples_apply else "—",
)
metrics[4].metric(
    "Items the systems disagree on",
    int(summary["systems_disagree"].sum()) if len(systems) > 1 else "—",
)

# --- the matrix ------------------------------------------------------------------------------

GREEN, AMBER, RED, GREY = (200, 230, 201), (255, 236, 179), (255, 205, 210), (207, 216, 220)
QA_COLOURS = {"correct": GREEN, "incorrect": RED, "not attempted": AMBER}


def blend(low: tuple[int, int, int], high: tuple[int, int, int], t: float) -> str:
    r, g, b = (round(a + (c - a) * t) for a, c in zip(low, high, strict=True))
    return f"background-color: rgb({r}, {g}, {b}); color: #1b1b1b"


def cell_colour(outcome: str, score: float) -> str:
    if family == "qa":
        colour = QA_COLOURS.get(outcome, GREY)
        return blend(colour, colour, 0)
    if outcome in ("failed", "missing"):
        return blend(GREY, GREY, 0)
    if score < 0.5:
        return blend(RED, AMBER, max(score, 0.0) / 0.5)
    return blend(AMBER, GREEN, (min(score, 1.0) - 0.5) / 0.5)


def cell_text(outcome: str, score: float) -> str:
    if family == "qa":
        return outcome
    if family == "draco":
        return f"{ui.points(score)} · {outcome}" if outcome != "scored" else ui.points(score)
    if outcome in ("useful",):
        return ui.fmt(score)
    if outcome == "not useful":
        return f"{ui.fmt(score)} · not useful"
    return outcome


item_column = info.item_noun
mean_column = {
    "qa": "Share correct",
    "draco": "Mean score",
    "extraction": "Mean shingle F1",
    "live": "Mean token F1",
}[family]
system_columns = {
    s: (f"{s} (system)" if s in ("#", item_column, mean_column) else s) for s in systems
}
# Large runs (SimpleQA: 4,326 questions × lanes) would send every styled cell to the browser:
# the matrix shows the first MAX_ROWS items the filters keep, and says so.
MAX_ROWS = 1000
listed = shown.head(MAX_ROWS)
matrix_cells = cells[cells["item_id"].isin(set(listed["item_id"]))]
matrix_cells = matrix_cells.assign(
    cell=[
        item_data.lineage_link(family, run_id, regime, system, item)
        + "#"
        + cell_text(outcome, float(score))
        for system, item, outcome, score in zip(
            matrix_cells["system"],
            matrix_cells["item_id"],
            matrix_cells["outcome"],
            matrix_cells["score"],
            strict=True,
        )
    ],
    css=[
        cell_colour(outcome, float(score))
        for outcome, score in zip(matrix_cells["outcome"], matrix_cells["score"], strict=True)
    ],
)
links = matrix_cells.pivot(index="item_id", columns="system", values="cell")
colours = matrix_cells.pivot(index="item_id", columns="system", values="css")
order = list(listed["item_id"])
matrix = pd.DataFrame(
    {
        "#": [None if pd.isna(p) else int(p) for p in listed["position"]],
        item_column: [
            " ".join(str(text or "").split()) or item
            for text, item in zip(listed["item_text"], listed["item_id"], strict=True)
        ],
    }
)
if listed["position"].isna().all():  # live URLs keep no dataset position: no column of blanks
    matrix = matrix.drop(columns="#")
for system in systems:
    matrix[system_columns[system]] = (
        links[system].reindex(order).tolist() if system in links else [None] * len(order)
    )
matrix[mean_column] = (listed["mean_score"].astype(float) * info.score_scale).tolist()
if info.samples_apply:
    matrix["Criteria split"] = listed["n_split"].astype(int).tolist()
css = pd.DataFrame("", index=matrix.index, columns=matrix.columns)
for system in systems:
    if system in colours:
        css[system_columns[system]] = colours[system].reindex(order).fillna("").tolist()

st.subheader(f"{info.item_noun.replace(' URL', '')}s × systems")
st.caption(
    {
        "qa": "Each cell is the grader's label of that lane's answer (green correct, red "
        "incorrect, amber not attempted, grey the request failed); open a cell for its lineage.",
        "draco": "Each cell is the task score in points (0-100, red low, green high; grey the "
        "research failed or is missing), with the status when the task is not fully scored; "
        "open a cell for its criteria, judge samples and report.",
        "extraction": "Each cell is the page's shingle F1 (0-1, red low, green high; grey the "
        "extraction failed), marked when the output is not a useful success; open a cell for "
        "the output next to the ground truth.",
        "live": "Each cell is the URL's token F1 against the engines' consensus passage (0-1, red "
        "low, green high; grey the extraction failed), marked when the output is not a useful "
        "success; open a cell for that engine's outcome, raw events and the consensus anchors. "
        "URLs hygiene excluded (dead, origin 5xx, redirect only) are listed on the live-URL page.",
    }[family]
)
if matrix.empty:
    st.info("No item matches the search and filters.")
else:
    if len(shown) > len(listed):
        st.warning(
            f"Showing the first {len(listed)} of {len(shown)} items: narrow them with the "
            "search or the filters."
        )
    column_config: dict[str, object] = {
        "#": st.column_config.NumberColumn("#", format="%d", help="Position in the dataset"),
        item_column: st.column_config.TextColumn(item_column, width="large"),
        mean_column: st.column_config.NumberColumn(
            mean_column,
            format="%.1f" if info.score_scale == 100 else "%.3f",
            help="Over the systems of this run, failures at 0",
        ),
        "Criteria split": st.column_config.NumberColumn(
            "Criteria split", help="Criteria whose judge samples disagree, over every system"
        ),
    }
    for system, column in system_columns.items():
        column_config[column] = st.column_config.LinkColumn(
            column, display_text=r"#(.*)$", help=f"{system}: open the lineage of this cell"
        )
    st.dataframe(
        matrix.style.apply(lambda _frame: css, axis=None),
        hide_index=True,
        column_config=column_config,
        height="auto" if len(matrix) <= 15 else 600,
        key="items_matrix",
    )

st.subheader("Outcomes per system")
st.caption("Every item of the run under this regime, before search and filters.")
counts = item_data.outcome_counts(cells).reset_index().rename(columns={"outcome": "Outcome"})
st.dataframe(counts, hide_index=True, key="items_counts")
