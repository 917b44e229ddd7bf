"""The research_prices seed (what dbt prices an unbilled research completion with) agrees with
the lane registry's list prices (collectors.draco.systems.price_for): no dbt build needed."""

from __future__ import annotations

import pytest
from price_seeds import SEEDS
from price_seeds import seed_rows as read_seed

from collectors.draco.systems import LANES, price_for

SEED = SEEDS / "research_prices.csv"


def seed_rows() -> dict[str, dict[str, str]]:
    return read_seed(SEED)


@pytest.mark.parametrize("lane", sorted(seed_rows()))
def test_every_seed_row_equals_price_for(lane):
    row = seed_rows()[lane]
    assert lane in LANES, f"{SEED}: lane {lane!r} is not a registered research lane"
    usd, basis, snapshot = price_for(lane)
    assert usd is not None, f"{SEED}: {lane} has a seed price but price_for has none"
    assert float(row["usd_per_task"]) == pytest.approx(usd, abs=1e-12), lane
    assert row["basis"] == basis, lane
    assert (row["price_snapshot_date"] or None) == snapshot, lane
    assert row["provider"] == LANES[lane].provider, lane


def test_every_priced_lane_is_in_the_seed():
    priced = {lane for lane in LANES if price_for(lane)[0] is not None}
    missing = sorted(priced - set(seed_rows()))
    assert not missing, f"{SEED}: lanes priced by price_for but absent from the seed: {missing}"
    assert priced  # the registry does price some lanes
