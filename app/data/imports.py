"""Other harnesses' results (docs/imports.md): imported DRACO leaderboards with the files' own
published figures beside our recomputation, imported regimes beside our re-judging, and the
header figures of imported QA files beside the QA marts' recomputation.

Every table here may be absent from an older snapshot: the functions then return None, and the
page says so instead of failing."""

from __future__ import annotations

import duckdb
import pandas as pd

from app.data.core import SnapshotUnavailable, _query

_IMPORTED_LEADERBOARD_SQL = """
select *
from marts.draco_imported_leaderboard
order by judge_id, rank_score, lane
"""

_PUBLISHED_FIGURES_SQL = """
select *
from marts.draco_published_figures
where run_id = ? and lane = ? and judge_id = ?
order by scope desc, scope_value, metric
"""

_QA_PUBLISHED_FIGURES_SQL = """
select *
from marts.qa_published_figures
order by lane, run_id, grader_id, metric, published_as
"""

_REGIME_COMPARISON_SQL = """
select *
from marts.draco_regime_comparison
order by lane, imported_judge_id, our_judge_id, our_run_id
"""


def _optional(sql: str, *params) -> pd.DataFrame | None:
    try:
        return _query(sql, *params)
    except (SnapshotUnavailable, duckdb.CatalogException):
        return None


def imported_draco_leaderboard() -> pd.DataFrame | None:
    """draco_imported_leaderboard: one row per (imported run, system, imported judge regime)."""
    return _optional(_IMPORTED_LEADERBOARD_SQL)


def published_figures(run_id: str, lane: str, judge_id: str) -> pd.DataFrame:
    """draco_published_figures of one imported file: overall first, then each domain."""
    return _query(_PUBLISHED_FIGURES_SQL, run_id, lane, judge_id)


def regime_comparison() -> pd.DataFrame | None:
    """draco_regime_comparison: each imported regime beside each regime of ours that judged the
    same system on the same dataset."""
    return _optional(_REGIME_COMPARISON_SQL)


def qa_published_figures() -> pd.DataFrame | None:
    """qa_published_figures: every header figure of every imported QA file (simple-evals,
    inspect) beside qa_leaderboard's recomputation under the file's grader regime."""
    return _optional(_QA_PUBLISHED_FIGURES_SQL)
