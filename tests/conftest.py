"""Shared fixtures: hermetic data roots, the shared datasets, the one fixture warehouse."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(
    os.environ.get("BENCH_DATA_DIR") or REPO_ROOT.parent / "shared" / "data"
).resolve()

# dlt and dbt must never phone home or touch machine-global state from tests.
os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")


@pytest.fixture
def bench_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "bench-home"
    monkeypatch.setenv("BENCH_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.fail(f"shared datasets not found at {SHARED_DATA}; set BENCH_DATA_DIR")
    return SHARED_DATA


@pytest.fixture(scope="session")
def fixture_warehouse(tmp_path_factory):
    """Every dbt family's fixture events, one `dbt build` per session for all xdist workers
    (tests/dbt/fixture_warehouse.py)."""
    # its helpers (tests/dbt and the QA and DRACO fixtures) are imported by plain name
    for helpers in ("dbt", "dbt_qa", "dbt_draco"):
        if str(REPO_ROOT / "tests" / helpers) not in sys.path:
            sys.path.insert(0, str(REPO_ROOT / "tests" / helpers))
    from fixture_warehouse import shared

    return shared(tmp_path_factory)


# xdist's loadfile hands out the files with the most tests first (--loadscope-reorder, its
# default), so the one-test files that each take a minute or more (a pipeline per test, pip
# install, three QA runs) come late; among files of equal count collection order decides, and
# this stable sort puts those long files first there.
_LONG_FILES_FIRST = ("tests/integration/", "tests/qa_answer_lanes/")


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: not item.nodeid.startswith(_LONG_FILES_FIRST))
