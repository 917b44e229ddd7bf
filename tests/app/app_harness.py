"""Shared helpers for the app tests: where the app is, and how to open one of its pages."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
from fixture_app_snapshot import AppSnapshot
from streamlit.testing.v1 import AppTest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
APP_SCRIPT = REPO_ROOT / "app" / "streamlit_app.py"
PAGES = {
    "overview": "app_pages/overview.py",
    "leaderboard": "app_pages/extraction_leaderboard.py",
    "runs": "app_pages/runs.py",
    "lineage": "app_pages/item_lineage.py",
}
TIMEOUT_S = 60


@dataclass(frozen=True)
class ServeSnapshot:
    home: Path
    serve_db: Path
    fixture: AppSnapshot | None  # None when testing another published snapshot

    def require_fixture(self) -> AppSnapshot:
        if self.fixture is None:
            pytest.skip("needs the planted rows of tests/app/fixture_app_snapshot.py")
        return self.fixture


def snapshot_rows(db: Path, sql: str, params: list[Any] | None = None) -> pd.DataFrame:
    """Read the snapshot directly (not through app.data) to state what the page must show."""
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params or []).df()


def open_page(page: str, query_params: dict[str, str] | None = None) -> AppTest:
    """Run the real entry point, switch to `page` (a PAGES key), with optional `?query` params."""
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    if page != "overview":
        at.switch_page(PAGES[page])
    if query_params:
        at.query_params.update(query_params)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at
