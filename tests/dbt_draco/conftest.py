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
from dbt_harness import BuiltWarehouse, run_dbt  # noqa: E402
from draco_fixture import Fixture, build_fixture, ingest  # noqa: E402


@pytest.fixture(scope="session")
def draco_fixture() -> Fixture:
    return build_fixture()


@pytest.fixture(scope="session")
def draco_warehouse(tmp_path_factory, draco_fixture) -> BuiltWarehouse:
    """The fixture events -> log -> dlt ingest -> `dbt build`, once for both test modules (a
    build costs ~45 s on 2 cores)."""
    work = tmp_path_factory.mktemp("dbt_draco")
    db_path = ingest(draco_fixture.events, work)
    result = run_dbt(["build"], db_path, work)
    return BuiltWarehouse(
        db_path,
        work,
        {
            "scored": draco_fixture.scored_run_id,
            "registration": draco_fixture.registration_run_id,
        },
        result.stdout,
    )
