"""tests/dbt_draco: the deep-research (DRACO) marts. Helper modules of tests/dbt (dbt_harness,
raw_events_fixture) and of this folder are imported by plain name."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for path in (HERE, HERE.parent / "dbt"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import pytest  # noqa: E402
from dbt_harness import BuiltWarehouse  # noqa: E402
from draco_fixture import Fixture, build_fixture  # noqa: E402


@pytest.fixture(scope="session")
def draco_fixture() -> Fixture:
    # deterministic (event ids from natural keys): the same events the shared warehouse holds
    return build_fixture()


@pytest.fixture(scope="session")
def draco_warehouse(fixture_warehouse) -> BuiltWarehouse:
    """The fixture events -> log -> dlt ingest -> `dbt build`, in the session's one fixture
    warehouse (tests/dbt/fixture_warehouse.py); run_ids "scored" and "registration"."""
    return fixture_warehouse.family("draco")
