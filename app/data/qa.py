"""Question answering (docs/warehouse-contract.md "Question answering marts")."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import duckdb
import pandas as pd

from app.data.core import (
    SnapshotUnavailable,
    _is_missing,
    _query,
    _records,
    serve_db_path,
    snapshot_version,
)

# --- question answering (docs/warehouse-contract.md "Question answering marts") -------------

QaState = Literal["missing", "absent", "mismatch", "empty", "unreadable", "ready"]

# The contract columns the QA pages read, per published table. Grain columns the contract names
# only in "one row per (...)" (lane, run_id, grader_id) are included: the pages filter on them.
QA_COLUMNS: dict[str, tuple[str, ...]] = {
    "fct_qa_answers": (
        "run_id", "benchmark", "series", "run_index", "lane", "dataset_sha256", "item_id",
        "row_position", "sample_order", "topic", "answer_type", "problem", "gold_answer",
        "attempt", "outcome", "landed", "answer", "grade", "label", "grader_id",
        "grader_official", "grade_parse_ok", "n_chunks", "url_normalizer_version", "ndcg_5",
        "ndcg_10", "recall_5", "recall_10", "mrr", "hit_5", "hit_10", "llm_hit_10",
        "llm_precision_10", "relevance_threshold", "queue_wait_ms", "round_trip_ms",
        "whole_call_ms", "search_event_id", "chunks_event_id", "answer_event_id",
        "grade_event_id",
    ),
    "qa_leaderboard": (
        "run_id", "benchmark", "series", "run_index", "lane", "grader_id", "grader_official",
        "n_questions", "n_landed", "n_failed", "failure_rate", "strict_accuracy",
        "strict_accuracy_ci_low", "strict_accuracy_ci_high", "is_correct", "is_incorrect",
        "is_not_attempted", "accuracy_given_attempted", "f1", "ndcg_5", "ndcg_10", "recall_5",
        "recall_10", "mrr", "hit_10", "llm_hit_10", "llm_precision_10", "latency_p50_ms",
        "latency_p95_ms", "usd_per_1k", "run_cost_usd", "price_snapshot_date", "price_basis",
        "baseline_lane", "accuracy_p_adjusted", "bootstrap_seed", "event_ids",
    ),
    "fct_qa_significance": (
        "run_id", "grader_id", "baseline_lane", "lane", "metric", "n_pairs", "mean_diff",
        "t_stat", "p_value", "p_adjusted", "correction", "family_size", "significant",
        "direction",
    ),
    "fct_qa_breakdowns": (
        "run_id", "lane", "grader_id", "dimension", "value", "n_questions", "strict_accuracy",
    ),
    "fct_series_accuracy": (
        "series", "lane", "grader_id", "run_index", "run_id", "strict_accuracy",
        "delta_vs_previous", "within_noise_band",
    ),
    "series_summary": (
        "series", "lane", "grader_id", "n_runs", "accuracies", "mean_accuracy", "min_accuracy",
        "max_accuracy", "range_points", "noise_band_points",
    ),
}  # fmt: skip


@dataclass(frozen=True)
class QaStatus:
    path: Path
    state: QaState
    detail: str = ""
    missing: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ready(self) -> bool:
        return self.state == "ready"


_QA_COLUMNS_SQL = """
select table_name, column_name
from information_schema.columns
where table_schema = 'marts' and list_contains(?::varchar[], table_name)
"""

_QA_COUNTS_SQL = """
select
    (select count(*) from marts.qa_leaderboard) as leaderboard_rows,
    (select count(*) from marts.fct_qa_answers) as answers
"""


def qa_status() -> QaStatus:
    """Whether the QA marts are there, shaped as the contract says, and hold rows; never raises."""
    return family_status("QA", QA_COLUMNS, _QA_COUNTS_SQL)


def family_status(
    family: str, wanted_columns: dict[str, tuple[str, ...]], counts_sql: str
) -> QaStatus:
    """One benchmark family's marts: missing snapshot, absent tables, columns missing against
    the contract, unreadable, empty (every count in `counts_sql` is 0) or ready."""
    path = serve_db_path()
    if snapshot_version(path) is None:
        return QaStatus(path, "missing", "not found")
    try:
        columns = _query(_QA_COLUMNS_SQL, tuple(wanted_columns))
        present: dict[str, set[str]] = {}
        for table, column in zip(columns["table_name"], columns["column_name"], strict=True):
            present.setdefault(table, set()).add(column)
        absent = tuple(t for t in wanted_columns if t not in present)
        if absent:
            return QaStatus(path, "absent", f"{family} marts missing: " + ", ".join(absent), absent)
        mismatched = tuple(
            f"{table}.{column}"
            for table, wanted in wanted_columns.items()
            for column in wanted
            if column not in present[table]
        )
        if mismatched:
            return QaStatus(
                path, "mismatch", "columns missing: " + ", ".join(mismatched), mismatched
            )
        counts = _query(counts_sql).iloc[0]
    except SnapshotUnavailable as exc:
        return QaStatus(path, "missing", str(exc))
    except duckdb.Error as exc:
        return QaStatus(path, "unreadable", f"{type(exc).__name__}: {exc}")
    if all(int(value) == 0 for value in counts):
        return QaStatus(path, "empty", f"the {family} marts have no rows")
    return QaStatus(path, "ready")


# QA leaderboard ------------------------------------------------------------------------------

_QA_RUNS_SQL = """
select
    board.run_id,
    any_value(board.benchmark) as benchmark,
    any_value(board.series) as series,
    any_value(board.run_index) as run_index,
    any_value(runs.dataset_name) as dataset_name,
    any_value(runs.status) as status,
    any_value(runs.started_at) as started_at,
    count(distinct board.lane) as n_lanes,
    count(distinct board.grader_id) as n_graders
from marts.qa_leaderboard as board
left join marts.dim_runs as runs on runs.run_id = board.run_id
group by board.run_id
order by max(runs.started_at) desc nulls last, board.run_id
"""

_QA_GRADERS_SQL = """
select
    grader_id,
    bool_and(grader_official) as grader_official,
    count(distinct lane) as n_lanes
from marts.qa_leaderboard
where run_id = ?
group by grader_id
order by bool_and(grader_official) desc, grader_id
"""

# An imported run's cost is what its file states (price_basis 'imported') or a user's override;
# the mart falls back to the lane_prices seed for a file that states none, and a list price of
# ours is no figure of the imported harness: those four columns are NULL (shown "—") there.
_IMPORT_COST_KEPT = (
    "(coalesce(runs.run_source, 'engine') <> 'import' "
    "or board.price_basis in ('imported', 'override'))"
)

_QA_LEADERBOARD_SQL = f"""
select
    board.* replace (
        case when {_IMPORT_COST_KEPT} then board.usd_per_1k end as usd_per_1k,
        case when {_IMPORT_COST_KEPT} then board.run_cost_usd end as run_cost_usd,
        case when {_IMPORT_COST_KEPT} then board.price_snapshot_date end as price_snapshot_date,
        case when {_IMPORT_COST_KEPT} then board.price_basis end as price_basis
    ),
    coalesce(runs.run_source = 'import', false) as imported
from marts.qa_leaderboard as board
left join marts.dim_runs as runs on board.run_id = runs.run_id
where board.run_id = ? and board.grader_id = ?
order by board.strict_accuracy desc nulls last, board.lane
"""

_QA_SIGNIFICANCE_SQL = """
select *
from marts.fct_qa_significance
where run_id = ? and grader_id = ?
order by metric, p_adjusted nulls last, lane
"""

_QA_BREAKDOWNS_SQL = """
select *
from marts.fct_qa_breakdowns
where run_id = ? and grader_id = ?
order by dimension, value, lane
"""


def qa_runs() -> pd.DataFrame:
    """One row per run with QA leaderboard rows (series, run index, lanes, grader regimes)."""
    return _query(_QA_RUNS_SQL)


def qa_graders(run_id: str) -> pd.DataFrame:
    """The grader regimes of one run (grader_id, grader_official, n_lanes), official first."""
    return _query(_QA_GRADERS_SQL, run_id)


def qa_leaderboard(run_id: str, grader_id: str) -> pd.DataFrame:
    """The leaderboard rows of one (run, grader regime), best strict accuracy first; `imported`
    when the run is an import (`bench import qa-results`), whose cost is only the file's own
    (price_basis 'imported') or an override, never a list price."""
    return _query(_QA_LEADERBOARD_SQL, run_id, grader_id)


def qa_significance(run_id: str, grader_id: str) -> pd.DataFrame:
    """Every lane-vs-baseline test of one (run, grader regime), all metrics."""
    return _query(_QA_SIGNIFICANCE_SQL, run_id, grader_id)


def qa_breakdowns(run_id: str, grader_id: str) -> pd.DataFrame:
    """Strict accuracy by topic and by answer type, per lane, of one (run, grader regime)."""
    return _query(_QA_BREAKDOWNS_SQL, run_id, grader_id)


# QA answers: per-question tables, lane vs lane ----------------------------------------------

_QA_RUN_LANES_SQL = """
select distinct lane
from marts.fct_qa_answers
where run_id = ? and (? is null or grader_id = ? or grader_id is null)
order by lane
"""

_QA_ITEMS_SQL = """
select item_id, sample_order, outcome, label, grader_id
from marts.fct_qa_answers
where run_id = ? and lane = ?
order by sample_order nulls last, item_id, grader_id
"""

_QA_LANE_ANSWERS_SQL = """
select
    item_id, sample_order, topic, answer_type, problem, gold_answer, outcome, landed, answer,
    label, grade_parse_ok, ndcg_10, mrr, llm_hit_10, round_trip_ms
from marts.fct_qa_answers
where run_id = ? and lane = ? and (grader_id = ? or grader_id is null)
order by sample_order nulls last, item_id
"""

# A question counts for the win/loss tally only when both lanes landed it (the pairing rule of
# the significance tests, methodology 2.6); the rest are listed as unpaired.
_QA_COMPARE_SQL = """
with
a as (
    select * from marts.fct_qa_answers
    where run_id = ? and lane = ? and (grader_id = ? or grader_id is null)
),
b as (
    select * from marts.fct_qa_answers
    where run_id = ? and lane = ? and (grader_id = ? or grader_id is null)
)
select
    coalesce(a.item_id, b.item_id) as item_id,
    coalesce(a.sample_order, b.sample_order) as sample_order,
    coalesce(a.topic, b.topic) as topic,
    coalesce(a.problem, b.problem) as problem,
    coalesce(a.gold_answer, b.gold_answer) as gold_answer,
    a.outcome as outcome_a,
    a.label as label_a,
    a.answer as answer_a,
    a.ndcg_10 as ndcg_10_a,
    b.outcome as outcome_b,
    b.label as label_b,
    b.answer as answer_b,
    b.ndcg_10 as ndcg_10_b,
    a.ndcg_10 - b.ndcg_10 as ndcg_10_diff,
    case
        when not coalesce(a.landed, false) or not coalesce(b.landed, false) then 'unpaired'
        when a.label = 'correct' and b.label is distinct from 'correct' then 'win'
        when b.label = 'correct' and a.label is distinct from 'correct' then 'loss'
        else 'tie'
    end as result
from a
full outer join b on a.item_id = b.item_id
order by sample_order nulls last, item_id
"""


def qa_run_lanes(run_id: str, grader_id: str | None = None) -> list[str]:
    """The lanes with answer rows in one run (of one grader regime, if given)."""
    return _query(_QA_RUN_LANES_SQL, run_id, grader_id, grader_id)["lane"].tolist()


def qa_items(run_id: str, lane: str) -> pd.DataFrame:
    """The questions one lane answered in one run, in evaluation (sample) order."""
    return _query(_QA_ITEMS_SQL, run_id, lane)


def qa_lane_answers(run_id: str, lane: str, grader_id: str) -> pd.DataFrame:
    """Per question of one lane: outcome, label, answer and the retrieval headline metrics."""
    return _query(_QA_LANE_ANSWERS_SQL, run_id, lane, grader_id)


def qa_compare(run_id: str, grader_id: str, lane_a: str, lane_b: str) -> pd.DataFrame:
    """Per question, lane A next to lane B: labels, answers, ndcg_10 (A − B), and the result for
    A (`win`|`loss`|`tie` on questions both landed, else `unpaired`)."""
    return _query(_QA_COMPARE_SQL, run_id, lane_a, grader_id, run_id, lane_b, grader_id)


# QA lineage ----------------------------------------------------------------------------------

_QA_LINEAGE_RUNS_SQL = """
select
    answers.run_id,
    any_value(answers.benchmark) as benchmark,
    any_value(answers.series) as series,
    any_value(answers.run_index) as run_index,
    any_value(runs.status) as status
from marts.fct_qa_answers as answers
left join marts.dim_runs as runs on runs.run_id = answers.run_id
group by answers.run_id
order by max(runs.started_at) desc nulls last, answers.run_id
"""

_QA_ANSWER_SQL = """
select *
from marts.fct_qa_answers
where run_id = ? and lane = ? and item_id = ?
order by grader_official desc nulls last, grader_id
"""

_QA_QUESTION_EVENT_SQL = """
select event_id
from marts.dim_events
where run_id = ? and event_type = 'question_registered' and (payload ->> 'item_id') = ?
order by occurred_at desc
limit 1
"""

_QA_RELEVANCE_SQL = """
select
    (payload ->> 'rank')::bigint as rank,
    (payload ->> 'grade')::bigint as grade,
    (payload ->> 'parse_ok')::boolean as parse_ok,
    payload ->> 'judge_id' as judge_id,
    (payload ->> 'attempt')::bigint as attempt,
    event_id
from marts.dim_events
where run_id = ? and event_type = 'relevance_graded'
    and (payload ->> 'lane') = ? and (payload ->> 'item_id') = ?
order by judge_id, rank, attempt desc
"""


def qa_lineage_runs() -> pd.DataFrame:
    """Runs that have QA answer rows (run_id, benchmark, series, run_index, status), newest first."""
    return _query(_QA_LINEAGE_RUNS_SQL)


def qa_answer(run_id: str, lane: str, item_id: str) -> list[dict[str, Any]]:
    """The `fct_qa_answers` row(s) of one (run, lane, item): one per grader regime present."""
    return _records(_query(_QA_ANSWER_SQL, run_id, lane, item_id))


def qa_question_event_id(run_id: str, item_id: str) -> str | None:
    """The question_registered event of one question of one run, if the snapshot has it."""
    frame = _query(_QA_QUESTION_EVENT_SQL, run_id, item_id)
    return None if frame.empty else str(frame["event_id"].iloc[0])


def qa_relevance_grades(run_id: str, lane: str, item_id: str) -> pd.DataFrame:
    """The UMBRELA grades (relevance_graded events) of one lane's chunks for one question."""
    return _query(_QA_RELEVANCE_SQL, run_id, lane, item_id)


# Series --------------------------------------------------------------------------------------

_SERIES_SQL = """
select
    series,
    grader_id,
    bool_and(grader_official) as grader_official,
    count(distinct run_index) as n_runs,
    count(distinct lane) as n_lanes
from marts.qa_leaderboard
where series is not null
group by series, grader_id
order by series, bool_and(grader_official) desc, grader_id
"""

_SERIES_ACCURACY_SQL = """
select *
from marts.fct_series_accuracy
where series = ? and grader_id = ?
order by lane, run_index
"""

_SERIES_SUMMARY_SQL = """
select *
from marts.series_summary
where series = ? and grader_id = ?
order by mean_accuracy desc nulls last, lane
"""


def qa_series() -> pd.DataFrame:
    """One row per (series, grader regime) with leaderboard rows: runs and lanes in it."""
    return _query(_SERIES_SQL)


def series_accuracy(series: str, grader_id: str) -> pd.DataFrame:
    """`fct_series_accuracy` of one (series, grader regime), per lane in run order, plus
    `accuracy_points` (strict accuracy × 100) and `delta_points` (the stored delta in points)."""
    frame = _query(_SERIES_ACCURACY_SQL, series, grader_id).copy()
    accuracy = pd.to_numeric(frame["strict_accuracy"], errors="coerce").astype(float)
    delta = pd.to_numeric(frame["delta_vs_previous"], errors="coerce").astype(float)
    frame["accuracy_points"] = accuracy * 100
    frame["delta_points"] = delta * _delta_scale(frame["lane"], accuracy, delta)
    return frame


def _delta_scale(lanes: pd.Series, accuracy: pd.Series, delta: pd.Series) -> float:
    """100 when the stored delta is in accuracy units (like strict_accuracy), 1 when the mart
    already states it in points: whichever matches the run-to-run differences."""
    previous = accuracy.groupby(lanes.to_numpy()).shift(1)
    step = (accuracy - previous)[delta.notna() & previous.notna()]
    stored = delta[step.index]
    if step.empty or ((stored - step).abs() < 1e-9).all():
        return 100.0
    if ((stored - 100 * step).abs() < 1e-6).all():
        return 1.0
    return 100.0


def series_summary(series: str, grader_id: str) -> pd.DataFrame:
    """`series_summary` of one (series, grader regime), best mean accuracy first."""
    frame = _query(_SERIES_SUMMARY_SQL, series, grader_id).copy()
    if "accuracies" in frame:
        frame["accuracies"] = [
            [float(v) for v in values] if values is not None and not _is_missing(values) else []
            for values in frame["accuracies"]
        ]
    return frame


# QA what-if inputs: the per-question rows qa_leaderboard averages and their graded chunks ------

# The landed answer rows of one (run, grader regime): the rows qa_leaderboard's relevance means
# are over. relevance_measured: the row has UMBRELA metrics at all (a lane that searches, in a
# run with a relevance judge: int_qa_answers_scored), which no threshold changes.
_QA_WHATIF_UNITS_SQL = """
select
    lane,
    item_id,
    sample_order,
    landed,
    llm_hit_10 is not null as relevance_measured,
    chunks_event_id,
    relevance_threshold
from marts.fct_qa_answers
where run_id = ? and grader_id = ? and landed
order by lane, sample_order, item_id
"""

_QA_GRADED_CHUNKS_SQL = """
select lane, item_id, chunk_rank, grade, chunks_event_id
from marts.fct_qa_graded_chunks
where run_id = ?
order by lane, item_id, chunk_rank
"""


def qa_whatif_units(run_id: str, grader_id: str) -> pd.DataFrame:
    """The landed fct_qa_answers rows of one (run, grader regime) for the what-if's relevance
    means (app.data.formulas.qa_lane_relevance)."""
    return _query(_QA_WHATIF_UNITS_SQL, run_id, grader_id)


def qa_graded_chunks(run_id: str) -> pd.DataFrame | None:
    """The run's graded chunks (fct_qa_graded_chunks); None when the snapshot predates the mart
    (the panel then asks for `bench build`)."""
    try:
        return _query(_QA_GRADED_CHUNKS_SQL, run_id)
    except duckdb.CatalogException:
        return None


# Series per vertical and the run-1 view (fct_series_vertical_accuracy, series_run1) ------------

_SERIES_VERTICAL_SQL = """
select *
from marts.fct_series_vertical_accuracy
where series = ? and grader_id = ?
order by vertical, lane, run_index
"""

_SERIES_RUN1_SQL = """
select *
from marts.series_run1
where series = ? and grader_id = ?
order by lane_kind, vertical, run1_rank, lane
"""


def series_vertical_accuracy(series: str, grader_id: str) -> pd.DataFrame | None:
    """Accuracy per run per vertical ('(all)' = every question) with lane_kind; None when the
    snapshot predates the mart."""
    try:
        return _query(_SERIES_VERTICAL_SQL, series, grader_id)
    except duckdb.CatalogException:
        return None


def series_run1(series: str, grader_id: str) -> pd.DataFrame | None:
    """The run-1-only view per (lane, vertical), ranked within the lane kind; None when the
    snapshot predates the mart."""
    try:
        return _query(_SERIES_RUN1_SQL, series, grader_id)
    except duckdb.CatalogException:
        return None


_QA_LANE_KINDS_SQL = """
select
    system.value ->> 'name' as lane,
    system.value ->> '$.settings.lane_kind' as declared_kind
from marts.dim_events as events, json_each(events.payload -> 'systems') as system
where events.run_id = ? and events.event_type = 'run_started'
"""


def qa_answer_lanes(run_id: str) -> set[str]:
    """The lanes a run declared as the vendor's own answer product (settings.lane_kind =
    'vendor_answer', as int_qa_lane_kinds reads it)."""
    kinds = _query(_QA_LANE_KINDS_SQL, run_id)
    return set(kinds.loc[kinds["declared_kind"] == "vendor_answer", "lane"])
