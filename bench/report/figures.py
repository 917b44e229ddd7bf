"""What `bench report` shows, in one place: for each leaderboard mart, the columns a figure's
table and CSV carry (names exactly as in the mart, so a CSV value is the mart's value), their
labels and display kinds, what a figure groups by and which column its chart plots.

Display kinds: `text`, `flag`, `count`, `fraction` (0-1, 3 decimals), `points` (a 0-1 mart
value shown × 100, 1 decimal: DRACO scores, as the app shows them), `usd`, `seconds`, `ms`, `p`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    name: str
    label: str
    kind: str = "text"


@dataclass(frozen=True)
class Chart:
    """Bars of `value` per row, with a whisker from `ci` (low, high) or ± `spread` (a std)."""

    value: str
    ci: tuple[str, str] | None = None
    spread: str | None = None


@dataclass(frozen=True)
class Split:
    """A second grouping computed in SQL, not a mart column (so not in the CSV): rows of one
    group with different values are ranked in separate figures."""

    name: str
    sql: str  # a scalar expression over `board`
    labels: dict[str, str]


@dataclass(frozen=True)
class Board:
    """One leaderboard mart: one figure (table + chart + CSV) per `group_by` value."""

    key: str
    title: str
    mart: str
    group_by: tuple[str, ...]
    row_key: tuple[str, ...]
    order_by: str  # groups newest run first, rows best first
    bar_label: str
    charts: tuple[Chart, ...]
    columns: tuple[Column, ...]
    split: Split | None = None
    regime: str | None = None  # the column naming the judging regime (never mixed)
    official: str | None = None  # whether that regime is the official one

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    def column(self, name: str) -> Column:
        return next(column for column in self.columns if column.name == name)


# Newest run first (dim_runs.started_at, as the app's run pickers order them), then run_id.
_RUN_ORDER = (
    "(select started_at from marts.dim_runs as r where r.run_id = board.run_id) desc nulls last, "
    "board.run_id"
)

# A vendor's own answer product and our synthesised answers are different kinds of system, never
# ranked in one table (as the QA leaderboard page and marts.vendor_scorecard rank them): the
# kind a run declared for each lane in its run_started event (as the app's qa_answer_lanes).
_QA_LANE_KIND = Split(
    name="lane_kind",
    sql="""coalesce((
        -- parenthesised: = binds tighter than ->>
        select bool_or((lanes.value ->> '$.settings.lane_kind') = 'vendor_answer')
        from marts.dim_events as events, json_each(events.payload -> 'systems') as lanes
        where events.run_id = board.run_id and events.event_type = 'run_started'
            and (lanes.value ->> '$.name') = board.lane
    ), false)""",
    labels={
        "False": "Synthesised answers (our synthesiser over each lane's search results)",
        "True": "Vendor's own answers (answer lanes, graded by the same grader)",
    },
)

QA = Board(
    key="qa",
    title="Question answering (SimpleQA-style lanes)",
    mart="qa_leaderboard",
    group_by=("run_id", "grader_id"),
    row_key=("run_id", "lane", "grader_id"),
    order_by=f"{_RUN_ORDER}, board.grader_official desc, board.grader_id, "
    "board.strict_accuracy desc nulls last, board.lane",
    bar_label="lane",
    charts=(Chart("strict_accuracy", ci=("strict_accuracy_ci_low", "strict_accuracy_ci_high")),),
    split=_QA_LANE_KIND,
    regime="grader_id",
    official="grader_official",
    columns=(
        Column("run_id", "Run"),
        Column("benchmark", "Benchmark"),
        Column("grader_id", "Grader regime"),
        Column("grader_official", "Official grader", "flag"),
        Column("lane", "Lane"),
        Column("n_questions", "Questions", "count"),
        Column("n_landed", "Landed", "count"),
        Column("n_failed", "Failed", "count"),
        Column("failure_rate", "Failure rate", "fraction"),
        Column("strict_accuracy", "Strict accuracy", "fraction"),
        Column("strict_accuracy_ci_low", "CI low", "fraction"),
        Column("strict_accuracy_ci_high", "CI high", "fraction"),
        Column("accuracy_given_attempted", "Accuracy given attempted", "fraction"),
        Column("f1", "F1", "fraction"),
        Column("latency_p50_ms", "Latency p50 (ms)", "ms"),
        Column("latency_p95_ms", "Latency p95 (ms)", "ms"),
        Column("usd_per_1k", "$ per 1k", "usd"),
        Column("run_cost_usd", "Run cost ($)", "usd"),
        Column("price_basis", "Price basis"),
        Column("baseline_lane", "Baseline lane"),
        Column("accuracy_p_adjusted", "p adj. vs baseline", "p"),
    ),
)

DRACO = Board(
    key="draco",
    title="Deep research (DRACO)",
    mart="draco_leaderboard",
    group_by=("run_id", "judge_id"),
    row_key=("run_id", "lane", "judge_id"),
    order_by=f"{_RUN_ORDER}, board.judge_official desc, board.judge_id, "
    "board.rank_score nulls last, board.lane",
    bar_label="lane",
    charts=(Chart("score_mean", ci=("score_ci_low", "score_ci_high")),),
    regime="judge_id",
    official="judge_official",
    columns=(
        Column("run_id", "Run"),
        Column("judge_id", "Judge regime"),
        Column("judge_official", "Official judge", "flag"),
        Column("rank_score", "Rank", "count"),
        Column("lane", "System"),
        Column("provider", "Provider"),
        Column("n_items", "Tasks", "count"),
        Column("n_scored", "Scored", "count"),
        Column("n_failed", "Failed", "count"),
        Column("score_mean", "Score × 100", "points"),
        Column("score_ci_low", "CI low × 100", "points"),
        Column("score_ci_high", "CI high × 100", "points"),
        Column("factual_accuracy_mean", "Factual accuracy × 100", "points"),
        Column("breadth_and_depth_of_analysis_mean", "Breadth and depth × 100", "points"),
        Column("presentation_quality_mean", "Presentation × 100", "points"),
        Column("citation_quality_mean", "Citations × 100", "points"),
        Column("pass_rate_mean", "Pass rate", "fraction"),
        Column("latency_mean_s", "Latency mean (s)", "seconds"),
        Column("cost_mean_usd", "Cost per task ($)", "usd"),
        Column("cost_basis", "Cost basis"),
    ),
)

EXTRACTION = Board(
    key="extraction",
    title="Extraction (per dataset)",
    mart="extraction_leaderboard",
    group_by=("dataset_sha256",),
    row_key=("run_id", "system"),
    order_by="board.dataset_name, board.dataset_sha256, board.rank_composite nulls last, "
    "board.composite desc nulls last, board.system, board.run_id",
    bar_label="system",
    # The ranked composite, and beside it the boilerplate-aware shingle F1 with its bootstrap std.
    charts=(Chart("composite"), Chart("shingle_f1", spread="shingle_f1_std")),
    columns=(
        Column("dataset_name", "Dataset"),
        Column("dataset_sha256", "Dataset sha256"),
        Column("run_id", "Run"),
        Column("rank_composite", "Rank", "count"),
        Column("system", "System"),
        Column("composite", "Composite (active weights)", "fraction"),
        Column("seed_composite", "Seed composite", "fraction"),
        Column("composite_is_seed", "Weights are the seed", "flag"),
        Column("shingle_f1", "Shingle F1", "fraction"),
        Column("shingle_f1_std", "Shingle F1 ± std", "fraction"),
        Column("shingle_precision", "Shingle precision", "fraction"),
        Column("shingle_precision_std", "Precision ± std", "fraction"),
        Column("shingle_recall", "Shingle recall", "fraction"),
        Column("shingle_recall_std", "Recall ± std", "fraction"),
        Column("rank_shingle_f1", "Rank by shingle F1", "count"),
        Column("completeness", "Completeness", "fraction"),
        Column("useful_success_rate", "Useful success", "fraction"),
        Column("token_f1", "Token F1", "fraction"),
        Column("latency_p95_s", "Latency p95 (s)", "seconds"),
        Column("n_items", "Pages", "count"),
        Column("n_failed", "Failed", "count"),
        Column("tie_note", "Tie"),
    ),
)

LIVE_EXTRACTION = Board(
    key="live_extraction",
    title="Live-URL extraction",
    mart="live_extraction_leaderboard",
    group_by=("run_id", "vertical"),
    row_key=("run_id", "system", "vertical"),
    order_by=f"{_RUN_ORDER}, board.vertical <> 'all', board.vertical, "
    "board.composite desc nulls last, board.system",
    bar_label="system",
    charts=(Chart("composite"),),
    columns=(
        Column("run_id", "Run"),
        Column("vertical", "Vertical"),
        Column("system", "Engine"),
        Column("provider", "Provider"),
        Column("engine_kind", "Kind"),
        Column("urls_scored", "URLs scored", "count"),
        Column("urls_excluded", "URLs excluded", "count"),
        Column("composite", "Composite", "fraction"),
        Column("raw_success_rate", "Raw success", "fraction"),
        Column("useful_success_rate", "Useful success", "fraction"),
        Column("completeness", "Completeness", "fraction"),
        Column("token_f1", "Token F1", "fraction"),
        Column("latency_p50_s", "Latency p50 (s)", "seconds"),
        Column("latency_p95_s", "Latency p95 (s)", "seconds"),
        Column("usd_per_1k_requests", "$ per 1k requests", "usd"),
        Column("cost_per_1k_useful_usd", "$ per 1k useful", "usd"),
        Column("price_basis", "Price basis"),
    ),
)

BOARDS = (QA, DRACO, EXTRACTION, LIVE_EXTRACTION)

# The scorecard's CSV carries every scalar column `bench scorecard` reads
# (bench.scorecard_cli.COLUMNS); its table shows these.
SCORECARD_MART = "vendor_scorecard"
SCORECARD_ROW_KEY = ("family", "product")
SCORECARD_TABLE = (
    Column("rank_in_family", "Rank", "count"),
    Column("vendor", "Vendor"),
    Column("product", "Product"),
    Column("product_kind", "Kind"),
    Column("headline", "Headline", "headline"),
    Column("ci_low", "CI low", "headline"),
    Column("ci_high", "CI high", "headline"),
    Column("cost_per_task_usd", "Cost per task ($)", "usd"),
    Column("latency_s", "Latency (s)", "seconds"),
    Column("n_items", "Items", "count"),
)

# Marts whose dbt documentation (yml description + the SQL model's header) is the report's
# methodology section, in this order.
DISCLOSED_MARTS = (SCORECARD_MART, *(board.mart for board in BOARDS))


def board_sql(board: Board) -> str:
    columns = ", ".join(f"board.{name}" for name in board.names)
    if board.split:
        columns += f", ({board.split.sql}) as {board.split.name}"
    return f"select {columns} from marts.{board.mart} as board order by {board.order_by}"
