"""Deep research (docs/warehouse-contract.md "Deep research (DRACO) marts")."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from app.data.core import (
    _json,
    _query,
    _records,
)
from app.data.extraction import events as _events
from app.data.qa import QaStatus, family_status
from warehouse import bodies as _bodies

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


def draco_judge_calls(verdict_event_id: str) -> list[dict[str, Any]]:
    """The LLM calls behind one judge_verdict event, in the order they were made (an unparsable
    first answer before its re-ask, then the call that decided the verdict), each with its
    request as it was sent.

    The judged report is stored once, in the verdict's source `report_normalized` event; the
    recorded request references it, and `warehouse.bodies` puts it back here. Each call is
    {"call", "model", "raw_completion", "request" (method, url, headers, body parsed, and when
    recorded `body_sha256` with `body_matches_sha256`), "messages" [(role, content)], "error"
    (why the body could not be rebuilt, else None)}. Empty when no LLM request was recorded
    (the offline judge, or a call that failed before answering)."""
    found = _events([verdict_event_id])
    payload = (found[0].get("payload") if found else None) or {}
    records = [
        record
        for record in [*(payload.get("earlier_calls") or []), payload.get("llm")]
        if isinstance(record, dict) and record.get("request")
    ]
    if not records:
        return []
    source = _events([payload["source_event_id"]]) if payload.get("source_event_id") else []
    judged_text = ((source[0].get("payload") or {}) if source else {}).get("judged_text")
    texts = [judged_text] if isinstance(judged_text, str) else []
    calls = []
    for number, record in enumerate(records, start=1):
        error = None
        try:
            request = _bodies.readable_request(record["request"], texts)
        except _bodies.BodyRefError as exc:
            request, error = dict(record["request"]), str(exc)
        calls.append(
            {
                "call": number,
                "model": record.get("model"),
                "raw_completion": record.get("raw_completion"),
                "request": request,
                "messages": _messages(request.get("body")),
                "error": error,
            }
        )
    return calls


def _messages(body: Any) -> list[tuple[str, str]]:
    """(role, content) of a chat body's system prompt and messages; the body itself as one
    text when it is not one."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return [("body", body if isinstance(body, str) else _json_text(body))]
    shown = [("system", str(body["system"]))] if body.get("system") else []
    for message in body["messages"]:
        if isinstance(message, dict):
            content = message.get("content")
            text = content if isinstance(content, str) else _json_text(content)
            shown.append((str(message.get("role")), text))
    return shown


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def draco_reports(run_id: str, lane: str, item_id: str) -> list[dict[str, Any]]:
    """Every research outcome of one (run, lane, item), latest attempt first; JSON parsed."""
    rows = _records(_query(_DRACO_REPORTS_SQL, run_id, lane, item_id))
    for row in rows:
        for column in ("raw_citations", "bibliography", "usage"):
            if column in row:
                row[column] = _json(row.get(column))
    return rows


# --- what-if inputs (app.whatif runs the dbt formulas over these rows) ---------------------

_DRACO_WHATIF_CRITERIA_SQL = """
select lane, item_id, criterion_id, criterion_position, weight, registered_weight, is_overridden,
    v, v_scored
from marts.fct_draco_criteria
where run_id = ? and judge_id = ?
order by lane, item_id, criterion_position
"""

_DRACO_WHATIF_ITEMS_SQL = """
select lane, item_id, position, report_event_id, score
from marts.fct_draco_items
where run_id = ? and judge_id = ?
order by lane, position, item_id
"""


def draco_whatif_inputs(run_id: str, judge_id: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(items, criteria) of one run and judge regime: what a penalty-floor what-if needs."""
    return (
        _query(_DRACO_WHATIF_ITEMS_SQL, run_id, judge_id),
        _query(_DRACO_WHATIF_CRITERIA_SQL, run_id, judge_id),
    )
