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


# The per-unit rows qa_leaderboard averages (landed fct_qa_answers rows of one run and grader
# regime), each unit's top-10 counts from its graded chunks (fct_qa_graded_chunks) at the
# threshold given, the unit's hit and precision, then the lane mean over landed rows.
_QA_LANE_RELEVANCE_SQL = """
with thresholded as (
    select chunks_event_id, chunk_rank, grade, cast(? as double) as threshold
    from chunks
),
counts as (
    select chunks_event_id, {umbrela_top_10_counts}
    from thresholded
    group by chunks_event_id
),
per_unit as (
    select
        units.lane,
        units.item_id,
        units.sample_order,
        units.landed,
        units.relevance_measured,
        counts.n_top_10,
        counts.n_relevant_10
    from units
    left join counts on units.chunks_event_id = counts.chunks_event_id
),
scored as (
    select
        lane,
        item_id,
        sample_order,
        landed,
        {umbrela_llm_hit_10} as llm_hit_10,
        {umbrela_llm_precision_10} as llm_precision_10
    from per_unit
),
metric_values as (
    select lane, 'llm_hit_10' as metric, item_id, sample_order, landed,
        cast(llm_hit_10 as double) as value
    from scored
    union all
    select lane, 'llm_precision_10' as metric, item_id, sample_order, landed,
        llm_precision_10 as value
    from scored
),
means as (
    select lane, metric, {qa_landed_mean} as mean
    from metric_values
    group by lane, metric
)
select
    lane,
    any_value(mean) filter (where metric = 'llm_hit_10') as llm_hit_10,
    any_value(mean) filter (where metric = 'llm_precision_10') as llm_precision_10
from means
group by lane
order by lane
"""

_QA_LANE_COSTS_SQL = """
with lanes as (
    select
        _row,
        lane,
        coalesce(given_usd_per_1k, usd_per_1k) as usd_per_1k,
        given_usd_per_1k is not null as repriced,
        run_cost_usd as published_run_cost_usd,
        n_landed,
        n_failed
    from board
)
select
    lane,
    usd_per_1k,
    case when repriced then {qa_run_cost} else published_run_cost_usd end as run_cost_usd
from lanes
order by _row
"""

QA_FORMULAS = (
    "umbrela_top_10_counts",
    "umbrela_llm_hit_10",
    "umbrela_llm_precision_10",
    "qa_landed_mean",
    "qa_run_cost",
)


def qa_lane_relevance(
    units: pd.DataFrame, chunks: pd.DataFrame, threshold: float, formulas: Formulas
) -> pd.DataFrame:
    """Per lane: llm_hit_10 and llm_precision_10 with a chunk relevant at grade >= `threshold`
    (formulas umbrela_top_10_counts, umbrela_llm_hit_10, umbrela_llm_precision_10,
    qa_landed_mean), as `bench rescore --umbrela-threshold` would publish them.

    `units`: the landed fct_qa_answers rows of one (run, grader regime) with
    relevance_measured (the row has UMBRELA metrics at all: a lane that searches, a run with a
    relevance judge); `chunks`: the run's fct_qa_graded_chunks rows."""
    sql = _QA_LANE_RELEVANCE_SQL.format(**formulas)
    return _over_frames(sql, [float(threshold)], units=units, chunks=chunks)


def qa_lane_costs(
    board: pd.DataFrame, prices: Mapping[str, float], formulas: Formulas
) -> pd.DataFrame:
    """Per qa_leaderboard row, in its order, what `bench rescore --lane-prices` with `prices`
    would publish: a lane given a price gets it and run_cost_usd at it (formula qa_run_cost);
    every other lane keeps its published usd_per_1k and run_cost_usd (for a lane priced by an
    imported file, the file's own total, which no list price restates)."""
    given = board[["lane", "usd_per_1k", "run_cost_usd", "n_landed", "n_failed"]].assign(
        _row=range(len(board)),
        given_usd_per_1k=pd.Series(
            [prices.get(lane) for lane in board["lane"]], index=board.index, dtype="float64"
        ),
    )
    out = _over_frames(_QA_LANE_COSTS_SQL.format(**formulas), board=given)
    out.index = board.index
    return out
