"""Every query the app runs: read-only, parameterized, against the published serving snapshot.

The app reads only `$BENCH_HOME/serve.duckdb` (schema `marts`, see docs/warehouse-contract.md),
never the file dlt and dbt write. Each query opens a read-only connection, runs and closes it
(`warehouse.query.read_only_query`): all sessions share one process, and DuckDB reuses an open
instance bound to the old inode after `publish` swaps the file, so no connection may outlive a
query. Results are cached with `st.cache_data`, keyed by the snapshot file's identity (mtime,
inode, size): a new publish is picked up on the next call without any cache invalidation.

User input (dataset, run, system, item, event ids) reaches SQL only as `?` parameters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import duckdb
import pandas as pd
import streamlit as st

from warehouse.paths import BenchPaths
from warehouse.query import read_only_query

SnapshotVersion = tuple[int, int, int]
SnapshotState = Literal["missing", "empty", "unreadable", "ready"]

REQUIRED_TABLES = (
    "dim_events",
    "dim_runs",
    "dim_scoring_vars",
    "extraction_leaderboard",
    "fct_extraction_pages",
)


class SnapshotUnavailable(RuntimeError):
    """The serving snapshot vanished between the status check and a query."""


@dataclass(frozen=True)
class SnapshotStatus:
    path: Path
    state: SnapshotState
    detail: str = ""
    published_at: str | None = None
    missing_tables: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ready(self) -> bool:
        return self.state == "ready"


# --- plumbing ------------------------------------------------------------------------------


def serve_db_path() -> Path:
    return BenchPaths.from_env().serve_db


def snapshot_version(path: Path) -> SnapshotVersion | None:
    """Identity of the file behind `path`; `publish` replaces the file, so all three change."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_mtime_ns, stat.st_ino, stat.st_size)


@st.cache_data(show_spinner=False, max_entries=512)
def _cached_query(
    db_path: str, version: SnapshotVersion, sql: str, params: tuple[Any, ...]
) -> pd.DataFrame:
    del version  # only part of the cache key
    bound = [list(p) if isinstance(p, tuple) else p for p in params]
    return read_only_query(Path(db_path), sql, bound)


def _query(sql: str, *params: Any) -> pd.DataFrame:
    path = serve_db_path()
    version = snapshot_version(path)
    if version is None:
        raise SnapshotUnavailable(f"{path} does not exist")
    try:
        return _cached_query(str(path), version, sql, tuple(params))
    except FileNotFoundError as exc:  # swapped away between stat and open
        raise SnapshotUnavailable(str(exc)) from exc


def _json(value: Any) -> Any:
    """DuckDB JSON columns arrive as text; parse them, leave anything else as is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {key: (None if _is_missing(value) else value) for key, value in row.items()}
        for row in frame.to_dict(orient="records")
    ]


def _is_missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # lists and arrays are never "missing"
        return False


# --- snapshot ------------------------------------------------------------------------------

_TABLES_SQL = """
select table_schema, table_name
from information_schema.tables
where (table_schema = ? or (table_schema = 'main' and table_name = '_publish'))
order by 1, 2
"""

_ROW_COUNTS_SQL = """
select
    (select count(*) from marts.dim_runs) as runs,
    (select count(*) from marts.extraction_leaderboard) as leaderboard_rows,
    (select count(*) from marts.fct_extraction_pages) as pages
"""

_PUBLISHED_AT_SQL = "select max(published_at)::varchar as published_at from main._publish"

_LOG_VERIFICATION_SQL = """
select metadata->'log_verification' as verification from main._publish
order by published_at desc limit 1
"""


def log_verification_warning() -> str | None:
    """A banner when the snapshot was published from a log that failed verification."""
    try:
        rows = _query(_LOG_VERIFICATION_SQL)
    except (SnapshotUnavailable, duckdb.Error):
        return None
    if rows.empty or rows.iloc[0]["verification"] is None:
        return None
    verification = json.loads(rows.iloc[0]["verification"])
    if verification.get("status") != "failed":
        return None
    aside = ", ".join(verification.get("segments_set_aside") or []) or "none"
    return (
        f"The event log failed verification ({verification.get('problems')} problem(s), checked "
        f"{verification.get('checked_at')}). Segments set aside, not shown: {aside}. "
        "Run `bench verify` to see why; `bench verify --accept REASON` records an acceptance."
    )


def snapshot_status() -> SnapshotStatus:
    """Whether there is anything to show; never raises."""
    path = serve_db_path()
    if snapshot_version(path) is None:
        return SnapshotStatus(path, "missing", "not found")
    try:
        tables = _query(_TABLES_SQL, "marts")
        marts = set(tables.loc[tables["table_schema"] == "marts", "table_name"])
        missing = tuple(t for t in REQUIRED_TABLES if t not in marts)
        if missing:
            return SnapshotStatus(
                path, "empty", "marts tables missing: " + ", ".join(missing), missing_tables=missing
            )
        counts = _query(_ROW_COUNTS_SQL).iloc[0]
        published_at = None
        if (tables["table_name"] == "_publish").any():
            published_at = _query(_PUBLISHED_AT_SQL).iloc[0]["published_at"]
    except SnapshotUnavailable as exc:
        return SnapshotStatus(path, "missing", str(exc))
    except duckdb.Error as exc:
        return SnapshotStatus(path, "unreadable", f"{type(exc).__name__}: {exc}")
    if int(counts["runs"]) == 0 and int(counts["leaderboard_rows"]) == 0:
        return SnapshotStatus(path, "empty", "the marts have no rows", published_at=published_at)
    return SnapshotStatus(
        path, "ready", published_at=None if pd.isna(published_at) else published_at
    )


_OVERVIEW_SQL = """
select
    (select count(*) from marts.dim_runs) as runs,
    (select count(distinct dataset_sha256) from marts.dim_runs) as datasets,
    (select count(distinct system) from marts.fct_extraction_pages) as systems,
    (select count(*) from marts.fct_extraction_pages) as pages,
    (select count(*) from marts.fct_extraction_pages where outcome <> 'completed') as pages_not_completed,
    (select count(*) from marts.dim_events) as events
"""


def overview_counts() -> dict[str, int]:
    row = _query(_OVERVIEW_SQL).iloc[0]
    return {key: int(value) for key, value in row.items()}


# --- leaderboard ---------------------------------------------------------------------------

_DATASETS_SQL = """
select
    dataset_sha256,
    any_value(dataset_name order by dataset_name) as dataset_name,
    count(distinct run_id) as n_runs,
    count(distinct system) as n_systems
from marts.extraction_leaderboard
group by dataset_sha256
order by dataset_name, dataset_sha256
"""

_LEADERBOARD_SQL = """
select *
from marts.extraction_leaderboard
where dataset_sha256 = ?
order by rank_composite nulls last, composite desc nulls last, system, run_id
"""


def list_datasets() -> pd.DataFrame:
    """One row per dataset that has leaderboard rows."""
    return _query(_DATASETS_SQL)


def leaderboard(dataset_sha256: str) -> pd.DataFrame:
    """Leaderboard rows of one dataset, best composite first (all contract columns)."""
    return _query(_LEADERBOARD_SQL, dataset_sha256)


# --- runs ----------------------------------------------------------------------------------

_RUNS_SQL = """
select
    run_id, benchmark, run_source, dataset_name, dataset_sha256, status,
    started_at, finished_at, n_items_registered, n_completed, n_failed
from marts.dim_runs
order by started_at desc nulls last, run_id
"""

_RUN_SQL = "select * from marts.dim_runs where run_id = ?"

_RUN_SYSTEMS_SQL = """
select
    system,
    any_value(system_version order by system_version) as system_version,
    count(*) as n_items,
    count(*) filter (where outcome = 'completed') as n_completed,
    count(*) filter (where outcome = 'failed') as n_failed,
    count(*) filter (where outcome = 'missing') as n_missing
from marts.fct_extraction_pages
where run_id = ?
group by system
order by system
"""

_RUN_FAILURES_SQL = """
select system, item_id, position, url, outcome, attempt, error_class, error_message, latency_ms
from marts.fct_extraction_pages
where run_id = ? and outcome <> 'completed'
order by system, position, item_id
"""

_RUN_ERROR_CLASSES_SQL = """
select system, outcome, coalesce(error_class, '(none)') as error_class, count(*) as n_items
from marts.fct_extraction_pages
where run_id = ? and outcome <> 'completed'
group by all
order by n_items desc, system, error_class
"""


def list_runs() -> pd.DataFrame:
    """One row per run, newest first."""
    return _query(_RUNS_SQL)


def run_detail(run_id: str) -> dict[str, Any] | None:
    """The `dim_runs` row of one run, JSON columns parsed; None if the run is unknown."""
    rows = _records(_query(_RUN_SQL, run_id))
    if not rows:
        return None
    row = rows[0]
    for column in ("systems", "spec", "argv"):
        row[column] = _json(row.get(column))
    return row


def run_system_counts(run_id: str) -> pd.DataFrame:
    """Per system of one run: items scored, completed, failed, missing."""
    return _query(_RUN_SYSTEMS_SQL, run_id)


def run_failures(run_id: str) -> pd.DataFrame:
    """Every page of one run that did not complete (failed or missing), with its error."""
    return _query(_RUN_FAILURES_SQL, run_id)


def run_error_classes(run_id: str) -> pd.DataFrame:
    """Failures of one run counted by system, outcome and error class."""
    return _query(_RUN_ERROR_CLASSES_SQL, run_id)


# --- item lineage --------------------------------------------------------------------------

_LINEAGE_RUNS_SQL = """
select
    pages.run_id,
    any_value(coalesce(runs.dataset_name, pages.dataset_sha256)) as dataset_name,
    any_value(runs.status) as status
from marts.fct_extraction_pages as pages
left join marts.dim_runs as runs on runs.run_id = pages.run_id
group by pages.run_id
order by max(runs.started_at) desc nulls last, pages.run_id
"""

_RUN_SYSTEM_NAMES_SQL = """
select distinct system
from marts.fct_extraction_pages
where run_id = ?
order by system
"""

_RUN_ITEMS_SQL = """
select item_id, position, outcome
from marts.fct_extraction_pages
where run_id = ? and system = ?
order by position, item_id
"""

_PAGE_SQL = """
select *
from marts.fct_extraction_pages
where run_id = ? and system = ? and item_id = ?
"""

_EVENTS_SQL = """
select
    event_id, event_type, schema_version, stored_schema_version, run_id, occurred_at,
    segment || ':' || line_no::varchar as segment_line, segment, line_no,
    content_sha256, prev_sha256, producer, payload
from marts.dim_events
where list_contains(?::varchar[], event_id)
order by occurred_at, segment, line_no
"""


def lineage_runs() -> pd.DataFrame:
    """Runs that have scored pages (run_id, dataset_name, status), newest first."""
    return _query(_LINEAGE_RUNS_SQL)


def run_system_names(run_id: str) -> list[str]:
    return _query(_RUN_SYSTEM_NAMES_SQL, run_id)["system"].tolist()


def run_items(run_id: str, system: str) -> pd.DataFrame:
    """The items one system was scored on in one run, in dataset order."""
    return _query(_RUN_ITEMS_SQL, run_id, system)


def page_score(run_id: str, system: str, item_id: str) -> dict[str, Any] | None:
    """The `fct_extraction_pages` row of one (run, system, item); None if there is none."""
    rows = _records(_query(_PAGE_SQL, run_id, system, item_id))
    return rows[0] if rows else None


def events(event_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The `dim_events` rows with these ids, oldest first, producer and payload parsed."""
    ids = tuple(dict.fromkeys(str(e) for e in event_ids if e))
    if not ids:
        return []
    rows = _records(_query(_EVENTS_SQL, ids))
    for row in rows:
        row["producer"] = _json(row.get("producer"))
        row["payload"] = _json(row.get("payload"))
    return rows


# --- scoring vars --------------------------------------------------------------------------

_SCORING_VARS_SQL = "select var_name, var_value from marts.dim_scoring_vars order by var_name"


def scoring_vars() -> dict[str, Any]:
    """The dbt vars in effect when the snapshot was built, values parsed from JSON."""
    frame = _query(_SCORING_VARS_SQL)
    return {row["var_name"]: _json(row["var_value"]) for row in _records(frame)}


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

_QA_LEADERBOARD_SQL = """
select *
from marts.qa_leaderboard
where run_id = ? and grader_id = ?
order by strict_accuracy desc nulls last, lane
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
    """The leaderboard rows of one (run, grader regime), best strict accuracy first."""
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


# --- deep research (docs/warehouse-contract.md "Deep research (DRACO) marts") ----------------

# The contract columns the DRACO pages read, per published table (grain columns included).
DRACO_COLUMNS: dict[str, tuple[str, ...]] = {
    "draco_leaderboard": (
        "run_id", "benchmark", "dataset_sha256", "lane", "provider", "judge_id", "n_items",
        "n_scored", "n_incomplete", "n_failed", "n_missing", "score_mean", "score_ci_low",
        "score_ci_high", "bootstrap_seed", "bootstrap_samples", "factual_accuracy_mean",
        "breadth_and_depth_of_analysis_mean", "presentation_quality_mean",
        "citation_quality_mean", "pass_rate_mean", "latency_mean_s", "cost_mean_usd",
        "cost_total_usd", "cost_basis", "price_snapshot_date", "n_split_criteria",
        "n_unparsed_samples", "n_failed_samples", "n_retried_samples", "judge_model",
        "judge_provider", "judge_samples", "judge_official", "normalizer_version",
        "pass_threshold", "penalty_floor", "rank_score", "regime_event_id",
    ),
    "fct_draco_items": (
        "run_id", "lane", "judge_id", "item_id", "position", "domain", "status",
        "research_state", "attempt", "error_class", "error_message", "n_samples",
        "n_samples_expected", "n_unparsed_samples", "n_failed_samples", "raw_score",
        "positive_weight", "score", "n_passed", "pass_rate", "wall_clock_ms", "cost_usd",
        "cost_basis", "dataset_sha256", "task_event_id", "research_event_id", "report_event_id",
        "research_failed_event_id",
    ),
    "fct_draco_item_axes": (
        "run_id", "lane", "judge_id", "item_id", "axis", "axis_title", "n_criteria",
        "n_criteria_judged", "n_passed", "n_split", "n_flagged_samples", "raw_score",
        "positive_weight", "score", "pass_rate",
    ),
    "fct_draco_criteria": (
        "run_id", "lane", "judge_id", "item_id", "criterion_id", "axis", "criterion_position",
        "requirement", "polarity", "registered_weight", "weight", "is_overridden", "is_floored",
        "n_samples_expected", "n_samples", "n_met", "v", "weighted_v", "split", "judged",
        "passed", "flagged", "criterion_event_id", "verdict_event_ids",
    ),
    "fct_draco_domains": (
        "run_id", "lane", "judge_id", "domain", "n_items", "n_scored", "n_incomplete",
        "n_failed", "n_missing", "score_mean", "factual_accuracy_mean", "pass_rate_mean",
    ),
    "fct_draco_significance": (
        "run_id", "judge_id", "lane_a", "lane_b", "n_pairs", "mean_a", "mean_b", "mean_diff",
        "t_stat", "p_ttest", "p_ttest_adjusted", "wilcoxon_stat", "p_wilcoxon",
        "p_wilcoxon_adjusted", "correction", "family_size", "significant", "direction",
    ),
    "fct_draco_criterion_agreement": (
        "run_id", "item_id", "criterion_id", "axis", "requirement", "polarity", "weight",
        "n_systems", "n_judges", "n_groups", "n_samples", "n_flagged_samples", "mean_v",
        "stddev_v", "noisy_share", "judge_disagreement_share",
    ),
    "dim_rubric_tasks": ("dataset_sha256", "item_id", "position", "domain", "problem"),
    "fct_draco_reports": (
        "run_id", "lane", "item_id", "attempt", "normalizer_version", "status",
        "is_latest_attempt", "provider", "vendor_run_id", "raw_output", "raw_citations",
        "wall_clock_ms", "queue_ms", "polls", "poll_interval_s", "cost_usd", "cost_basis",
        "error_stage", "error_class", "error_message", "raw_output_sha256", "judged_text",
        "bibliography", "stripped_bibliography", "strip_heading", "stripped_text",
        "source_event_ids", "research_event_id", "research_failed_event_id", "report_event_id",
    ),
    "fct_draco_verdict_samples": (
        "run_id", "lane", "item_id", "attempt", "judge_id", "criterion_id", "sample",
        "judge_attempt", "is_latest_attempt", "polarity", "outcome", "flagged", "verdict", "met",
        "justification", "reasks", "error_class", "error_message", "judge_model", "llm_model",
        "prompt_sha256", "raw_completion", "verdict_event_id", "source_event_id",
    ),
}  # fmt: skip


# The DRACO pages use the same states and fields as the QA ones.
DracoStatus = QaStatus


_DRACO_COUNTS_SQL = """
select
    (select count(*) from marts.draco_leaderboard) as leaderboard_rows,
    (select count(*) from marts.fct_draco_items) as items
"""


def draco_status() -> DracoStatus:
    """Whether the DRACO marts are there, shaped as the contract says, and hold rows; never
    raises (same states as `qa_status`)."""
    return family_status("DRACO", DRACO_COLUMNS, _DRACO_COUNTS_SQL)


_DRACO_PRESENT_SQL = """
select count(*) as n
from information_schema.tables
where table_schema = 'marts' and table_name = 'draco_leaderboard'
"""


def draco_leaderboard_rows() -> int:
    """Rows of marts.draco_leaderboard; 0 when the snapshot predates the DRACO marts."""
    if int(_query(_DRACO_PRESENT_SQL).iloc[0]["n"]) == 0:
        return 0
    return int(_query("select count(*) as n from marts.draco_leaderboard").iloc[0]["n"])


# DRACO leaderboard ---------------------------------------------------------------------------

_DRACO_RUNS_SQL = """
select
    board.run_id,
    any_value(board.benchmark) as benchmark,
    any_value(runs.dataset_name) as dataset_name,
    any_value(runs.status) as status,
    any_value(runs.started_at) as started_at,
    count(distinct board.lane) as n_lanes,
    count(distinct board.judge_id) as n_judges
from marts.draco_leaderboard as board
left join marts.dim_runs as runs on runs.run_id = board.run_id
group by board.run_id
order by max(runs.started_at) desc nulls last, board.run_id
"""

_DRACO_JUDGES_SQL = """
select
    judge_id,
    any_value(judge_model) as judge_model,
    any_value(judge_provider) as judge_provider,
    any_value(judge_samples) as judge_samples,
    bool_and(judge_official) as judge_official,
    any_value(normalizer_version) as normalizer_version,
    any_value(regime_event_id) as regime_event_id,
    count(distinct lane) as n_lanes
from marts.draco_leaderboard
where run_id = ?
group by judge_id
order by bool_and(judge_official) desc, judge_id
"""

_DRACO_LEADERBOARD_SQL = """
select *
from marts.draco_leaderboard
where run_id = ? and judge_id = ?
order by rank_score, lane
"""

_DRACO_DOMAINS_SQL = """
select *
from marts.fct_draco_domains
where run_id = ? and judge_id = ?
order by domain, lane
"""

_DRACO_SIGNIFICANCE_SQL = """
select *
from marts.fct_draco_significance
where run_id = ? and judge_id = ?
order by p_ttest_adjusted nulls last, lane_a, lane_b
"""


def draco_runs() -> pd.DataFrame:
    """One row per deep-research run with leaderboard rows (lanes, judge regimes), newest first."""
    return _query(_DRACO_RUNS_SQL)


def draco_judges(run_id: str) -> pd.DataFrame:
    """The judge regimes of one run (model, provider, samples, official), official first."""
    return _query(_DRACO_JUDGES_SQL, run_id)


def draco_leaderboard(run_id: str, judge_id: str) -> pd.DataFrame:
    """The leaderboard rows of one (run, judge regime), best score first."""
    return _query(_DRACO_LEADERBOARD_SQL, run_id, judge_id)


def draco_domains(run_id: str, judge_id: str) -> pd.DataFrame:
    """Per domain and lane of one (run, judge regime): items and mean scores."""
    return _query(_DRACO_DOMAINS_SQL, run_id, judge_id)


def draco_significance(run_id: str, judge_id: str) -> pd.DataFrame:
    """Every paired lane-vs-lane test of one (run, judge regime)."""
    return _query(_DRACO_SIGNIFICANCE_SQL, run_id, judge_id)


# DRACO criteria ------------------------------------------------------------------------------

_DRACO_AGREEMENT_SQL = """
select
    agreement.*,
    tasks.domain,
    tasks.position,
    tasks.problem
from marts.fct_draco_criterion_agreement as agreement
left join (select distinct run_id, dataset_sha256 from marts.fct_draco_items) as runs
    on runs.run_id = agreement.run_id
left join marts.dim_rubric_tasks as tasks
    on tasks.dataset_sha256 = runs.dataset_sha256 and tasks.item_id = agreement.item_id
where agreement.run_id = ?
    and (? is null or agreement.axis = ?)
    and (? is null or agreement.polarity = ?)
order by tasks.position nulls last, agreement.item_id, agreement.criterion_id
"""

_DRACO_AXES_SQL = """
select distinct axis
from marts.fct_draco_criterion_agreement
where run_id = ?
order by axis
"""

_DRACO_CRITERION_GROUPS_SQL = """
select
    lane, judge_id, item_id, criterion_id, attempt, polarity, weight, n_samples_expected,
    n_samples, n_met, v, split, passed, flagged, verdict_event_ids
from marts.fct_draco_criteria
where run_id = ? and item_id = ? and criterion_id = ?
order by lane, judge_id
"""


def draco_axes(run_id: str) -> list[str]:
    return _query(_DRACO_AXES_SQL, run_id)["axis"].tolist()


def draco_criterion_agreement(
    run_id: str, axis: str | None = None, polarity: str | None = None
) -> pd.DataFrame:
    """`fct_draco_criterion_agreement` of one run (optionally one axis / polarity), with the
    task's domain, position and problem."""
    return _query(_DRACO_AGREEMENT_SQL, run_id, axis, axis, polarity, polarity)


def draco_criterion_groups(run_id: str, item_id: str, criterion_id: str) -> pd.DataFrame:
    """One criterion of one run per (lane, judge regime): samples, n met, v, passed, flagged."""
    return _query(_DRACO_CRITERION_GROUPS_SQL, run_id, item_id, criterion_id)


# DRACO lineage -------------------------------------------------------------------------------

_DRACO_RUN_LANES_SQL = """
select distinct lane
from marts.fct_draco_items
where run_id = ? and judge_id = ?
order by lane
"""

_DRACO_ITEMS_SQL = """
select item_id, position, domain, status, score
from marts.fct_draco_items
where run_id = ? and judge_id = ? and lane = ?
order by position, item_id
"""

_DRACO_ITEM_SQL = """
select items.*, tasks.problem
from marts.fct_draco_items as items
left join marts.dim_rubric_tasks as tasks
    on tasks.dataset_sha256 = items.dataset_sha256 and tasks.item_id = items.item_id
where items.run_id = ? and items.lane = ? and items.judge_id = ? and items.item_id = ?
"""

_DRACO_ITEM_AXES_SQL = """
select *
from marts.fct_draco_item_axes
where run_id = ? and lane = ? and judge_id = ? and item_id = ?
order by axis
"""

_DRACO_ITEM_CRITERIA_SQL = """
select *
from marts.fct_draco_criteria
where run_id = ? and lane = ? and judge_id = ? and item_id = ?
order by criterion_position, criterion_id
"""

_DRACO_VERDICT_SAMPLES_SQL = """
select *
from marts.fct_draco_verdict_samples
where run_id = ? and lane = ? and judge_id = ? and item_id = ? and attempt = ?
order by criterion_id, sample, judge_attempt
"""

_DRACO_REPORTS_SQL = """
select *
from marts.fct_draco_reports
where run_id = ? and lane = ? and item_id = ?
order by attempt desc, normalizer_version nulls last
"""


def draco_run_lanes(run_id: str, judge_id: str) -> list[str]:
    return _query(_DRACO_RUN_LANES_SQL, run_id, judge_id)["lane"].tolist()


def draco_items(run_id: str, judge_id: str, lane: str) -> pd.DataFrame:
    """The tasks of one lane under one judge regime, in dataset order, with status and score."""
    return _query(_DRACO_ITEMS_SQL, run_id, judge_id, lane)


def draco_item(run_id: str, lane: str, judge_id: str, item_id: str) -> dict[str, Any] | None:
    """The `fct_draco_items` row (plus the task's problem); None if there is none."""
    rows = _records(_query(_DRACO_ITEM_SQL, run_id, lane, judge_id, item_id))
    return rows[0] if rows else None


def draco_item_axes(run_id: str, lane: str, judge_id: str, item_id: str) -> pd.DataFrame:
    return _query(_DRACO_ITEM_AXES_SQL, run_id, lane, judge_id, item_id)


def draco_item_criteria(run_id: str, lane: str, judge_id: str, item_id: str) -> pd.DataFrame:
    """Every criterion of one item under one regime: weights, v, passed, verdict event ids."""
    return _query(_DRACO_ITEM_CRITERIA_SQL, run_id, lane, judge_id, item_id)


def draco_verdict_samples(
    run_id: str, lane: str, judge_id: str, item_id: str, attempt: int
) -> pd.DataFrame:
    """Every judge_verdict of one research attempt under one regime (superseded ones too)."""
    return _query(_DRACO_VERDICT_SAMPLES_SQL, run_id, lane, judge_id, item_id, int(attempt))


def draco_reports(run_id: str, lane: str, item_id: str) -> list[dict[str, Any]]:
    """Every research outcome of one (run, lane, item), latest attempt first; JSON parsed."""
    rows = _records(_query(_DRACO_REPORTS_SQL, run_id, lane, item_id))
    for row in rows:
        for column in ("raw_citations", "bibliography", "usage"):
            if column in row:
                row[column] = _json(row.get(column))
    return rows
