"""Shared fixtures: hermetic data roots, the shared datasets, event builders."""

from __future__ import annotations

import os
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
