"""dbt's price seeds, rendered from the lane registries, whose prices are the vendors' own
(collectors.vendors.<vendor>): a list price is written once, in its vendor module; the seed
files are generated from it (`--write`) and checked against it (`--check`, and the test).

    python -m collectors.price_seeds --check   # exit 1, naming each seed that differs
    python -m collectors.price_seeds --write   # rewrite dbt_project/seeds/*_prices.csv

- `lane_prices.csv`: the SimpleQA search lanes (collectors.search.LANES), the two offline lanes
  at their demo prices (basis "demo price") and the vendors' answer lanes (collectors.qa.answer_lanes.ANSWER_LANES), USD per 1,000.
- `research_prices.csv`: every DRACO research lane with a per-task list price or estimate
  (collectors.draco.systems.price_for); lanes billed by usage have no row.
- `extraction_prices.csv`: every live extraction vendor engine, USD per 1,000 requests (empty
  when no list price is recorded).

tests/dbt/test_price_seeds.py holds the committed seeds equal to the rendering.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

SEEDS_DIR = Path(__file__).resolve().parents[1] / "dbt_project" / "seeds"

Row = tuple[str, ...]


def _usd(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def lane_price_rows() -> list[Row]:
    from collectors.draco.systems.local_rag import DEMO_PRICE_BASIS
    from collectors.qa.answer_lanes import ANSWER_LANES
    from collectors.qa.lanes import DEMO_PRICE_PER_1K_USD, ClosedBookLane, LocalBm25Lane
    from collectors.search import LANES

    rows: list[Row] = [
        (s.lane, s.provider, _usd(s.price_usd_per_1k), s.price_snapshot, "list")
        for s in LANES.values()
    ]
    rows += [
        (lane.name, lane.provider, _usd(DEMO_PRICE_PER_1K_USD[lane.name]), "", DEMO_PRICE_BASIS)
        for lane in (LocalBm25Lane, ClosedBookLane)
    ]
    rows += [
        (a.lane, a.provider, _usd(a.price_usd_per_1k), a.price_snapshot or "", "list")
        for a in ANSWER_LANES.values()
    ]
    return rows


def research_price_rows() -> list[Row]:
    from collectors.draco.systems import LANES, price_for

    rows: list[Row] = []
    for lane, spec in LANES.items():
        usd, basis, snapshot = price_for(lane)
        if usd is not None:
            rows.append((lane, spec.provider, _usd(usd), snapshot or "", basis or ""))
    return rows


def extraction_price_rows() -> list[Row]:
    from collectors.extraction.live.engines import VENDOR_ENGINES

    return [
        (
            name,
            engine.provider,
            _usd(engine.price_usd_per_1k),
            engine.module.PRICE_SNAPSHOT,
            engine.module.PRICE_BASIS,
        )
        for name, engine in VENDOR_ENGINES.items()
    ]


SEEDS: dict[str, tuple[Row, Callable[[], list[Row]]]] = {
    "lane_prices.csv": (
        ("lane", "provider", "usd_per_1k", "price_snapshot_date", "basis"),
        lane_price_rows,
    ),
    "research_prices.csv": (
        ("lane", "provider", "usd_per_task", "price_snapshot_date", "basis"),
        research_price_rows,
    ),
    "extraction_prices.csv": (
        ("system", "provider", "usd_per_1k_requests", "price_snapshot_date", "basis"),
        extraction_price_rows,
    ),
}


def render(name: str) -> str:
    """The seed file's text, as dbt reads it (header first, one row per lane)."""
    header, rows = SEEDS[name]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows())
    return out.getvalue()


def seed_data(text: str) -> tuple[Row, frozenset[Row]]:
    """A seed's header and rows as data: prices compared as numbers ("5.00" is 5.0), rows in
    any order (dbt loads a table, not a sequence)."""
    header, *rows = list(csv.reader(io.StringIO(text)))
    price = next(i for i, column in enumerate(header) if column.startswith("usd_"))
    return tuple(header), frozenset(
        tuple(_usd(float(v)) if i == price and v else v for i, v in enumerate(row)) for row in rows
    )


def stale_seeds(seeds_dir: Path = SEEDS_DIR) -> list[str]:
    """The seeds whose committed data differs from the rendering (missing files included)."""
    stale = []
    for name in SEEDS:
        path = seeds_dir / name
        if not path.is_file() or seed_data(path.read_text(encoding="utf-8")) != seed_data(
            render(name)
        ):
            stale.append(name)
    return stale


def write_seeds(seeds_dir: Path = SEEDS_DIR) -> list[str]:
    """Rewrite the seeds whose data differs, in the rendering's canonical text; their names."""
    stale = stale_seeds(seeds_dir)
    for name in stale:
        (seeds_dir / name).write_text(render(name), encoding="utf-8")
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m collectors.price_seeds", description=__doc__)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="exit 1 when a seed is stale")
    action.add_argument("--write", action="store_true", help="rewrite the stale seeds")
    parser.add_argument("--seeds-dir", type=Path, default=SEEDS_DIR)
    args = parser.parse_args(argv)
    if args.write:
        written = write_seeds(args.seeds_dir)
        print(f"rewrote {', '.join(written)}" if written else "price seeds already current")
        return 0
    stale = stale_seeds(args.seeds_dir)
    for name in stale:
        print(
            f"{args.seeds_dir / name}: differs from the lane registries' prices (collectors.vendors); "
            "run `python -m collectors.price_seeds --write`",
            file=sys.stderr,
        )
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
