"""The lane_prices seed (what qa_leaderboard prices a QA lane with) agrees with the lane registry:
the search and answer lanes' list prices come from their vendor modules (collectors.search.LANES,
collectors.qa.answer_lanes.ANSWER_LANES), the two offline lanes carry their made-up demo prices
labelled "demo price" (collectors.qa.lanes.DEMO_PRICE_PER_1K_USD), never basis "list". No dbt
build needed."""

from __future__ import annotations

import csv
import sys

import pytest
from price_seeds import SEEDS
from price_seeds import seed_rows as read_seed

from collectors.qa.answer_lanes import ANSWER_LANES
from collectors.qa.lane_registry import OFFLINE_LANES, available_lanes
from collectors.qa.lanes import DEMO_PRICE_PER_1K_USD, ClosedBookLane, LocalBm25Lane
from collectors.search import LANES

SEED = SEEDS / "lane_prices.csv"
OFFLINE = {lane.name: lane for lane in (ClosedBookLane, LocalBm25Lane)}


def seed_rows() -> dict[str, dict[str, str]]:
    return read_seed(SEED)


def registry_price(lane: str) -> tuple[str, float, str, str | None]:
    """(provider, usd_per_1k, basis, snapshot date) as the registry states it."""
    if lane in LANES:
        spec = LANES[lane]
        return spec.provider, spec.price_usd_per_1k, "list", spec.price_snapshot
    if lane in ANSWER_LANES:
        answer = ANSWER_LANES[lane]
        return answer.provider, answer.price_usd_per_1k, "list", answer.price_snapshot
    return OFFLINE[lane].provider, DEMO_PRICE_PER_1K_USD[lane], "demo price", None


@pytest.mark.parametrize("lane", sorted(seed_rows()))
def test_every_seed_row_equals_the_registry(lane):
    row = seed_rows()[lane]
    assert lane in available_lanes(), f"{SEED}: lane {lane!r} is not a registered QA lane"
    provider, usd, basis, snapshot = registry_price(lane)
    assert float(row["usd_per_1k"]) == pytest.approx(usd, abs=1e-12), f"{SEED}: {lane} usd_per_1k"
    assert row["basis"] == basis, f"{SEED}: {lane} basis"
    assert row["provider"] == provider, f"{SEED}: {lane} provider"
    if snapshot is not None:
        assert row["price_snapshot_date"] == snapshot, f"{SEED}: {lane} price_snapshot_date"


def test_every_registered_lane_is_in_the_seed():
    missing = sorted((set(LANES) | set(ANSWER_LANES) | set(OFFLINE_LANES)) - set(seed_rows()))
    assert not missing, f"{SEED}: registered QA lanes absent from the seed: {missing}"
    assert set(OFFLINE) == set(OFFLINE_LANES)


def test_a_seed_price_that_differs_from_the_registry_fails(tmp_path, monkeypatch):
    # The check above must bite: a seed with one price changed is reported for that lane.
    rows = list(seed_rows().values())
    rows[0] = {**rows[0], "usd_per_1k": f"{float(rows[0]['usd_per_1k']) + 1:.2f}"}
    changed = tmp_path / "lane_prices.csv"
    with changed.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    monkeypatch.setattr(sys.modules[__name__], "SEED", changed)
    with pytest.raises(AssertionError, match="usd_per_1k"):
        test_every_seed_row_equals_the_registry(rows[0]["lane"])
