"""The scoring formulas of the snapshot (marts.dim_scoring_formulas, rendered from the dbt macros)
and the queries that run them over published rows for the what-if panels (app/whatif.py).

The rows come from the snapshot through the other app/data modules; the formulas run in a
private in-memory DuckDB over those frames (nothing is read from or written to any file), with
the panel's settings where the build had its own.
"""

from __future__ import annotations

from collections.abc import Mapping

import duckdb
import pandas as pd

from app.data.core import _query, _records

Formulas = Mapping[str, str]  # formula name -> SQL text

_SCORING_FORMULAS_SQL = "select formula, sql_text from marts.dim_scoring_formulas order by formula"


def scoring_formulas() -> dict[str, str]:
    """The SQL of each scoring formula the snapshot was built with. Empty for a snapshot
    published before the mart existed: the panels then ask for a `bench build`."""
    try:
        frame = _query(_SCORING_FORMULAS_SQL)
    except duckdb.CatalogException:
        return {}
    return {row["formula"]: row["sql_text"] for row in _records(frame)}


def _over_frames(sql: str, params: list | None = None, **frames: pd.DataFrame) -> pd.DataFrame:
    """`sql` over the given frames, each visible under its keyword's name."""
    with duckdb.connect() as con:
        for name, frame in frames.items():
            con.register(name, frame)
        return con.execute(sql, params or []).df()


def extraction_composite(board: pd.DataFrame, formulas: Formulas) -> pd.Series:
    """Formula extraction_composite over extraction_leaderboard rows whose w_<name> columns
    hold the weights to apply; in the rows' order."""
    numbered = board.assign(_row=range(len(board)))
    sql = f"select {formulas['extraction_composite']} as composite from board order by _row"
    composite = _over_frames(sql, board=numbered)["composite"]
    return pd.Series(composite.to_numpy(), index=board.index)


_DRACO_ITEM_SCORES_SQL = """
with inputs as (
    select
        lane,
        item_id,
        criterion_position,
        v_scored,
        -- the weight before any floor: the override when there is one, else the registered one
        case when is_overridden then weight else registered_weight end as weight,
        cast(? as double) as penalty_floor
    from criteria
),
in_effect as (
    select lane, item_id, criterion_position, v_scored, {draco_weight_in_effect} as weight
    from inputs
),
terms as (
    select *, {draco_rubric_term} as weighted_v from in_effect
),
sums as (
    select lane, item_id, {draco_rubric_mass} from terms group by lane, item_id
)
select lane, item_id, raw_score, positive_weight, {draco_rubric_score} as score
from sums
order by lane, item_id
"""

_DRACO_LANE_SCORES_SQL = """
with per_item as (
    select
        items.lane,
        items.item_id,
        items.position,
        -- an item without a report keeps its 0, like draco_leaderboard's score_mean
        case when items.report_event_id is null then 0.0 else coalesce(scored.score, 0.0) end
            as score
    from items
    left join scored on items.lane = scored.lane and items.item_id = scored.item_id
)
select lane, {draco_score_mean} as what_if_score
from per_item
group by lane
"""


def draco_item_scores(
    criteria: pd.DataFrame, penalty_floor: float | None, formulas: Formulas
) -> pd.DataFrame:
    """Per (lane, item) of fct_draco_criteria rows: raw_score, positive_weight and score, with
    `penalty_floor` (None: penalties as registered) in place of the build's."""
    sql = _DRACO_ITEM_SCORES_SQL.format(**formulas)
    return _over_frames(sql, [penalty_floor], criteria=criteria)


def draco_lane_means(items: pd.DataFrame, scored: pd.DataFrame, formulas: Formulas) -> pd.DataFrame:
    """Per lane: what_if_score, the mean over every item of the grid (fct_draco_items rows) of
    its score in `scored` (draco_item_scores), 0 for an item without a report."""
    return _over_frames(_DRACO_LANE_SCORES_SQL.format(**formulas), items=items, scored=scored)
