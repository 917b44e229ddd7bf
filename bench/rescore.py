"""`bench rescore`: validated scoring vars, a build of only what they feed, a before/after table.

The extraction weights' validator (parse_weights) lives in warehouse/scoring_vars.py, shared
with the app's what-if panel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from warehouse.lake import open_warehouse, warehouse_exists
from warehouse.metric_scales import METRIC_SCALES, MISSING
from warehouse.scoring_vars import (  # noqa: F401  (bench.rescore.parse_weights is the CLI's)
    dbt_var_defaults,
    extraction_weight_names,
    parse_weights,
)


def parse_lane_prices(spec: str) -> dict[str, float]:
    """`brave_search=4.5,exa_search_auto=7` -> {lane: usd_per_1k}; merged by `bench rescore`
    into var lane_price_overrides (a lane not named keeps its price). Refused, naming the rule:
    not LANE=NUMBER, a lane given twice, a price that is not a finite number >= 0."""
    prices: dict[str, float] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        lane, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not lane:
            raise ValueError(f"--lane-prices: {part!r}: expected LANE=USD_PER_1K")
        if lane in prices:
            raise ValueError(f"--lane-prices: {lane} is given twice")
        try:
            price = float(value)
        except ValueError:
            raise ValueError(f"--lane-prices: {lane}={value!r} is not a number") from None
        if not math.isfinite(price) or price < 0:
            raise ValueError(f"--lane-prices: {lane}={value}: a price must be a finite number >= 0")
        prices[lane] = price
    if not prices:
        raise ValueError("--lane-prices: give at least one LANE=USD_PER_1K")
    return prices


def known_lanes(warehouse_db: Path) -> list[str]:
    """The lanes a price can be set for: every lane a QA run can use (the lane registry,
    collectors.qa.lane_registry.available_lanes(), which the lane_prices seed mirrors), plus the
    lanes only the warehouse knows (an imported file's own lane, `bench import qa-results --lane
    NAME`), read from marts.qa_leaderboard when the warehouse has been built."""
    from collectors.qa.lane_registry import available_lanes

    lanes = list(available_lanes())
    if warehouse_exists(warehouse_db):
        with open_warehouse(warehouse_db, read_only=True) as con:
            try:
                rows = con.execute(
                    "select distinct lane from marts.qa_leaderboard where lane is not null"
                ).fetchall()
            except duckdb.CatalogException:  # no QA mart built yet
                rows = []
        lanes += sorted({lane for (lane,) in rows} - set(lanes))
    return lanes


def check_lane_prices(prices: dict[str, float], warehouse_db: Path) -> None:
    """A price for a lane nobody can run or import would be stored and never shown: refused."""
    known = known_lanes(warehouse_db)
    unknown = [lane for lane in prices if lane not in known]
    if unknown:
        raise ValueError(
            f"--lane-prices: unknown lane{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(unknown)}; the known lanes are {', '.join(known)}"
        )


def check_draco_overrides(rows: list[dict[str, Any]], warehouse_db: Path) -> None:
    """Every override must name a criterion registered in the warehouse (item and criterion)."""
    if not warehouse_exists(warehouse_db):
        raise ValueError(f"no warehouse at {warehouse_db}: run `bench build` before rescoring")
    with open_warehouse(warehouse_db, read_only=True) as con:
        try:
            known = set(
                con.execute(
                    "select distinct item_id, criterion_id from marts.dim_rubric_criteria"
                ).fetchall()
            )
        except duckdb.CatalogException:
            known = set()
    items = {item for item, _ in known}
    for row in rows:
        item, criterion = row["item_id"], row["criterion_id"]
        if item not in items:
            raise ValueError(f"--draco-weights: task {item!r} is not registered in the warehouse")
        if (item, criterion) not in known:
            raise ValueError(
                f"--draco-weights: task {item!r} has no criterion {criterion!r} in the warehouse"
            )


def changed_vars(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Names whose value in effect differs (a var absent from a set has its dbt default)."""
    defaults = dbt_var_defaults()
    names = set(before) | set(after)
    return sorted(
        n for n in names if before.get(n, defaults.get(n)) != after.get(n, defaults.get(n))
    )


def describe_vars(scoring: dict[str, Any]) -> str:
    """The custom vars in effect, short: `extraction_weights, umbrela_threshold=2` or
    `the defaults` (a long value is named, not printed)."""
    custom = changed_vars({}, scoring)
    if not custom:
        return "the defaults"
    return ", ".join(
        name if isinstance(scoring[name], dict | list) else f"{name}={scoring[name]}"
        for name in custom
    )


# --- before / after --------------------------------------------------------------------------


@dataclass(frozen=True)
class Leaderboard:
    mart: str
    group: tuple[str, ...]  # one ranking per group
    entry: str  # what is ranked
    score: str  # higher is better
    scale: str  # its display scale in warehouse.metric_scales (the app's, e.g. DRACO x 100)


LEADERBOARDS = (
    Leaderboard(
        "extraction_leaderboard", ("run_id",), "system", "composite", "extraction_composite"
    ),
    Leaderboard("draco_leaderboard", ("run_id", "judge_id"), "lane", "score_mean", "draco_score"),
)


def leaderboard_scores(db: Path) -> dict[str, dict[tuple, float | None]]:
    """{mart: {(group..., entry): score}} of every leaderboard the warehouse holds."""
    found: dict[str, dict[tuple, float | None]] = {}
    if not warehouse_exists(db):
        return found
    with open_warehouse(db, read_only=True) as con:
        for board in LEADERBOARDS:
            columns = ", ".join((*board.group, board.entry, board.score))
            try:
                rows = con.execute(f"select {columns} from marts.{board.mart}").fetchall()
            except duckdb.CatalogException:
                continue
            found[board.mart] = {tuple(r[:-1]): r[-1] for r in rows}
    return found


def _ranks(scores: dict[tuple, float | None]) -> dict[tuple, int]:
    """Competition rank (1 = best) within each group; ties share a rank; NULL scores last."""
    by_group: dict[tuple, list[tuple]] = {}
    for key in scores:
        by_group.setdefault(key[:-1], []).append(key)
    ranks: dict[tuple, int] = {}
    for keys in by_group.values():
        ordered = sorted(keys, key=lambda k: (scores[k] is None, -(scores[k] or 0.0)))
        for position, key in enumerate(ordered, start=1):
            previous = ordered[position - 2] if position > 1 else None
            same = previous is not None and scores[previous] == scores[key]
            ranks[key] = ranks[previous] if same else position
    return ranks


def before_after_rows(before: dict, after: dict) -> dict[str, list[tuple]]:
    """Per leaderboard that changed: (group, entry, rank before, rank after, score before,
    score after) sorted by group then new rank."""
    changed: dict[str, list[tuple]] = {}
    for mart, new in after.items():
        old = before.get(mart, {})
        if old == new:
            continue
        old_ranks, new_ranks = _ranks(old), _ranks(new)
        rows = [
            (key[:-1], key[-1], old_ranks.get(key), new_ranks[key], old.get(key), new[key])
            for key in new
        ]
        changed[mart] = sorted(rows, key=lambda r: (tuple(map(str, r[0])), r[3], str(r[1])))
    return changed


def before_after_tables(before: dict, after: dict):
    """rich Tables of the leaderboards the rescore changed."""
    from rich.table import Table

    tables = []
    for mart, rows in before_after_rows(before, after).items():
        board = next(b for b in LEADERBOARDS if b.mart == mart)
        table = Table(title=f"{mart}: before → after")
        for column in (*board.group, board.entry):
            table.add_column(column)
        scale = METRIC_SCALES[board.scale]
        table.add_column("rank", justify="right")
        table.add_column(scale.axis_title, justify="right")
        for group, entry, old_rank, new_rank, old_score, new_score in rows:
            move = "" if old_rank in (None, new_rank) else (" ▲" if new_rank < old_rank else " ▼")
            table.add_row(
                *map(str, group),
                str(entry),
                f"{_fmt(old_rank)} → {new_rank}{move}",
                f"{_score(scale, old_score)} → {_score(scale, new_score)}",
            )
        tables.append(table)
    return tables


def _score(scale, value) -> str:
    """A score on its display scale, one more decimal than the app so a small move shows."""
    shown = scale.shown(value)
    return MISSING if shown is None else f"{shown:.{scale.digits + 1}f}"


def _fmt(value) -> str:
    if value is None:
        return MISSING
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)
