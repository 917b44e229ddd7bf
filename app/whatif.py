"""What-if re-ranking on the snapshot: dbt's own formulas, applied to published mart columns.

No new numbers and no formula written here: each function takes rows the marts already hold and
runs the SQL of the formula the marts were built with, as published in marts.dim_scoring_formulas
(rendered from the dbt macros themselves; run by app/data/formulas.py), with the panel's
settings in place of the build's. So
a what-if equals what `bench rescore` would publish (held equal by tests/app/test_real_pages.py
against real dbt builds), and a formula changed in dbt reaches the panel with the next build.
What is left here is plumbing: which rows, grouped how, ranked how. "Make it official" is always
that command.
"""

from __future__ import annotations

import pandas as pd

from app.data import formulas as formula_sql
from app.data.formulas import Formulas
from warehouse.scoring_vars import parse_weights


def weight_names(board: pd.DataFrame) -> list[str]:
    """The weight names of the snapshot's leaderboard, in mart column order."""
    return [c[2:] for c in board.columns if c.startswith("w_")]


def active_weights(board: pd.DataFrame) -> dict[str, float]:
    row = board.iloc[0]
    return {name: float(row[f"w_{name}"]) for name in weight_names(board)}


def extraction_composite(
    board: pd.DataFrame, weights: dict[str, float], formulas: Formulas
) -> pd.Series:
    """The leaderboard's composite (formula extraction_composite) with `weights` in place of
    the published w_<name> columns; a weight not given weighs 0."""
    chosen = board.assign(**{f"w_{n}": float(weights.get(n, 0.0)) for n in weight_names(board)})
    return formula_sql.extraction_composite(chosen, formulas)


def rerank(board: pd.DataFrame, weights: dict[str, float], formulas: Formulas) -> pd.DataFrame:
    """System, what-if composite and rank (ties share the best rank, like SQL rank()), beside the
    published rank, best first."""
    what_if = extraction_composite(board, weights, formulas)
    out = pd.DataFrame(
        {
            "system": board["system"],
            "run_id": board["run_id"],
            "what_if_composite": what_if,
            "published_rank": board["rank_composite"],
        }
    )
    out["what_if_rank"] = out["what_if_composite"].rank(method="min", ascending=False).astype(int)
    out["moved"] = out["published_rank"] - out["what_if_rank"]
    return out.sort_values(["what_if_rank", "system"]).reset_index(drop=True)


def rescore_plan(weights: dict[str, float]) -> tuple[str, dict[str, float]]:
    """The `bench rescore --weights ...` command for the panel's weights and the weights it sets,
    checked by the CLI's own validator (warehouse.scoring_vars.parse_weights): a set the CLI
    would refuse (e.g. summing to 1.10) raises that validator's ValueError instead of becoming a
    command. The panel ranks with the returned weights, so the command reproduces its numbers."""
    spec = ",".join(f"{name}={_num(value)}" for name, value in weights.items() if value)
    official = parse_weights(spec)
    drift = max((abs(official.get(n, 0.0) - float(v)) for n, v in weights.items()), default=0.0)
    if drift > 1e-9:  # a weight finer than the 4 decimals printed: say so rather than round
        raise ValueError(f"--weights {spec}: rounds the panel's weights {weights}")
    return f"bench rescore --weights {spec}", {n: official.get(n, 0.0) for n in weights}


def _num(value: float) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".") or "0"


# --- deep research: a penalty floor ----------------------------------------------------------


def draco_item_scores(
    criteria: pd.DataFrame, penalty_floor: float | None, formulas: Formulas
) -> pd.DataFrame:
    """Per (lane, item): the item score (formulas draco_weight_in_effect, draco_rubric_term,
    draco_rubric_mass, draco_rubric_score) with `penalty_floor` in place of the build's.
    `criteria` are fct_draco_criteria rows of one (run, judge)."""
    floor = None if penalty_floor is None else float(penalty_floor)
    return formula_sql.draco_item_scores(criteria, floor, formulas)


def draco_lane_scores(
    items: pd.DataFrame, criteria: pd.DataFrame, penalty_floor: float | None, formulas: Formulas
) -> pd.DataFrame:
    """Mean item score per lane over the whole grid (fct_draco_items rows of one (run, judge);
    formula draco_score_mean), ranked, best first."""
    scored = draco_item_scores(criteria, penalty_floor, formulas)
    out = formula_sql.draco_lane_means(items, scored, formulas)
    out["what_if_rank"] = out["what_if_score"].rank(method="min", ascending=False).astype(int)
    return out.sort_values(["what_if_rank", "lane"]).reset_index(drop=True)


def draco_floor_command(floor: float | None, published_floor: float | None) -> str | None:
    """`bench rescore` that makes the DRACO floor what the panel shows, touching no other var:
    a floor sets --draco-penalty-floor; no floor resets only that var (--reset would discard
    every custom var). None when the published scores already have it."""
    if floor == published_floor:
        return None
    if floor is None:
        return "bench rescore --reset-var draco_penalty_floor"
    return f"bench rescore --draco-penalty-floor {_num(floor)}"


# --- question answering: the UMBRELA relevance threshold and lane prices ---------------------


def qa_relevance(
    units: pd.DataFrame, chunks: pd.DataFrame, threshold: float, formulas: Formulas
) -> pd.DataFrame:
    """Per lane: llm_hit_10 and llm_precision_10 with chunks relevant at grade >= `threshold`
    (formulas umbrela_top_10_counts, umbrela_llm_hit_10, umbrela_llm_precision_10 per question,
    qa_landed_mean per lane). `units`: the landed fct_qa_answers rows of one (run, grader
    regime) (app.data.qa_whatif_units); `chunks`: the run's fct_qa_graded_chunks rows."""
    return formula_sql.qa_lane_relevance(units, chunks, float(threshold), formulas)


def qa_costs(
    board: pd.DataFrame,
    prices: dict[str, float | None],
    published_prices: dict[str, float | None],
    formulas: Formulas,
) -> pd.DataFrame:
    """Per qa_leaderboard row: usd_per_1k and run_cost_usd as the rescore this panel prints
    would publish them: the lanes whose price changed at the new price (formula qa_run_cost),
    the others as published."""
    return formula_sql.qa_lane_costs(board, changed_prices(prices, published_prices), formulas)


def qa_formulas_published(formulas: Formulas) -> bool:
    """Whether the snapshot publishes every formula the QA what-if runs."""
    return all(name in formulas for name in formula_sql.QA_FORMULAS)


# What the QA what-if can rank by: column -> whether higher is better.
QA_RANK_BY = {
    "strict_accuracy": True,
    "llm_hit_10": True,
    "llm_precision_10": True,
    "usd_per_1k": False,
}


def qa_rerank(
    board: pd.DataFrame, relevance: pd.DataFrame, costs: pd.DataFrame, rank_by: str
) -> pd.DataFrame:
    """Lane, strict accuracy, the what-if relevance and cost columns, the published rank (by
    strict accuracy, the leaderboard's) and the what-if rank by `rank_by` (ties share the best
    rank; a lane without a value gets none), best first."""
    out = board[["lane", "strict_accuracy"]].merge(relevance, on="lane", how="left")
    out = out.merge(costs, on="lane", how="left")
    out["published_rank"] = (
        board["strict_accuracy"].rank(method="min", ascending=False).astype("Int64").to_numpy()
    )
    out["what_if_rank"] = (
        out[rank_by].astype(float).rank(method="min", ascending=not QA_RANK_BY[rank_by])
    ).astype("Int64")
    return out.sort_values(["what_if_rank", "lane"], na_position="last").reset_index(drop=True)


def qa_rescore_command(
    threshold: float,
    published_threshold: float,
    prices: dict[str, float | None],
    published_prices: dict[str, float | None],
) -> str | None:
    """`bench rescore` with what differs from the snapshot (None when nothing does): the
    threshold, and the prices of the lanes whose price changed (--lane-prices sets those lanes,
    the others keep theirs)."""
    parts = []
    if float(threshold) != float(published_threshold):
        parts.append(f"--umbrela-threshold {_num(threshold)}")
    changed = changed_prices(prices, published_prices)
    if changed:
        spec = ",".join(f"{lane}={_num(price)}" for lane, price in changed.items())
        parts.append(f"--lane-prices {spec}")
    return f"bench rescore {' '.join(parts)}" if parts else None


def changed_prices(
    prices: dict[str, float | None], published_prices: dict[str, float | None]
) -> dict[str, float]:
    """The lanes the panel gave a price other than the published one (an emptied price keeps
    the published one: --lane-prices cannot unset a price)."""
    return {
        lane: price
        for lane, price in prices.items()
        if price is not None and not _same_price(price, published_prices.get(lane))
    }


def _same_price(price: float, published: float | None) -> bool:
    return published is not None and not pd.isna(published) and abs(price - published) < 1e-12
