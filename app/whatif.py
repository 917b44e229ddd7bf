"""What-if re-ranking on the snapshot: the dbt formulas, applied to published mart columns.

No SQL and no new numbers: each function takes rows the marts already hold and applies the same
formula the dbt model does, so a what-if equals what `bench rescore` would publish (held equal by
tests/app/test_whatif.py against real dbt builds). "Make it official" is always that command.
"""

from __future__ import annotations

import math

import pandas as pd

# Weight name -> the extraction_leaderboard column it weighs: the dbt macro
# extraction_weight_components (dbt_project/macros/scoring_vars.sql) says the same. The names
# themselves come from the snapshot (the w_<name> columns), never from this map.
EXTRACTION_COMPONENTS = {
    "completeness": "completeness",
    "success": "useful_success_rate",
    "f1": "token_f1",
    "latency": "latency_score",
    "throughput": "throughput_score",
    "shingle_precision": "shingle_precision",
    "shingle_recall": "shingle_recall",
    "shingle_f1": "shingle_f1",
}


def weight_names(board: pd.DataFrame) -> list[str]:
    """The weight names of the snapshot's leaderboard, in mart column order."""
    return [c[2:] for c in board.columns if c.startswith("w_")]


def active_weights(board: pd.DataFrame) -> dict[str, float]:
    row = board.iloc[0]
    return {name: float(row[f"w_{name}"]) for name in weight_names(board)}


def extraction_composite(board: pd.DataFrame, weights: dict[str, float]) -> pd.Series:
    """Σ weight × component, an unmeasurable (NULL) component contributing 0, not renormalised
    (extraction_leaderboard.sql, macro extraction_composite)."""
    total = pd.Series(0.0, index=board.index)
    for name, weight in weights.items():
        total = total + float(weight) * board[EXTRACTION_COMPONENTS[name]].astype(float).fillna(0.0)
    return total


def rerank(board: pd.DataFrame, weights: dict[str, float]) -> pd.DataFrame:
    """System, what-if composite and rank (ties share the best rank, like SQL rank()), beside the
    published rank, best first."""
    what_if = extraction_composite(board, weights)
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


def rescore_command(weights: dict[str, float]) -> str:
    spec = ",".join(f"{name}={_num(value)}" for name, value in weights.items() if value)
    return f"bench rescore --weights {spec or 'completeness=0'}"


def _num(value: float) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".") or "0"


# --- deep research: a penalty floor ----------------------------------------------------------


def draco_item_scores(criteria: pd.DataFrame, penalty_floor: float | None) -> pd.DataFrame:
    """Per (lane, item): clamp(Σ weight × v / Σ positive weight, 0, 1) with every negative
    weight raised to `penalty_floor` (int_draco_criteria_weighted + int_draco_items_scored;
    macro rubric_score). `criteria` are fct_draco_criteria rows of one (run, judge); the weight
    before any floor is the registered one unless an override set it."""
    base = criteria["weight"].where(criteria["is_overridden"], criteria["registered_weight"])
    weight = base.astype(float)
    if penalty_floor is not None:
        weight = weight.where(weight >= penalty_floor, float(penalty_floor))
    frame = criteria.assign(
        w=weight,
        wv=weight * criteria["v"].astype(float).fillna(0.0),
        positive=weight.where(weight > 0, 0.0),
    )
    grouped = frame.groupby(["lane", "item_id"], as_index=False).agg(
        raw=("wv", "sum"), positive=("positive", "sum")
    )
    grouped["score"] = [
        _rubric_score(raw, positive)
        for raw, positive in zip(grouped["raw"], grouped["positive"], strict=True)
    ]
    return grouped


def _rubric_score(raw: float, positive: float) -> float:
    if positive is None or math.isnan(positive) or positive <= 0:
        return 0.0
    return min(max(raw / positive, 0.0), 1.0)


def draco_lane_scores(
    items: pd.DataFrame, criteria: pd.DataFrame, penalty_floor: float | None
) -> pd.DataFrame:
    """Mean item score per lane over the whole grid (fct_draco_items rows of one (run, judge)):
    items without a report keep their 0, like draco_leaderboard's score_mean."""
    scored = draco_item_scores(criteria, penalty_floor).set_index(["lane", "item_id"])["score"]
    keys = list(zip(items["lane"], items["item_id"], strict=True))
    has_report = items["report_event_id"].notna().to_numpy()
    per_item = [
        float(scored.get(key, 0.0)) if reported else 0.0
        for key, reported in zip(keys, has_report, strict=True)
    ]
    lanes = items.assign(what_if_score=per_item).groupby("lane", as_index=False)
    out = lanes.agg(what_if_score=("what_if_score", "mean"))
    out["what_if_rank"] = out["what_if_score"].rank(method="min", ascending=False).astype(int)
    return out.sort_values(["what_if_rank", "lane"]).reset_index(drop=True)
