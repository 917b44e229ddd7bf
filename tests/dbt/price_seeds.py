"""Reading a dbt price seed for the seed <-> registry sync tests (QA lane_prices, DRACO
research_prices): one row per lane, a lane listed twice is an error naming the file."""

from __future__ import annotations

import csv
from pathlib import Path

from dbt_harness import DBT_PROJECT

SEEDS = DBT_PROJECT / "seeds"


def seed_rows(seed: Path) -> dict[str, dict[str, str]]:
    with seed.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    lanes = [row["lane"] for row in rows]
    assert len(lanes) == len(set(lanes)), f"{seed}: a lane is listed twice"
    return {row["lane"]: row for row in rows}
