"""Fixtures for the dbt project tests: the extraction view of the session's one fixture warehouse
(tests/dbt/fixture_warehouse.py).

The helper modules of this folder (dbt_harness, extraction_*, raw_events_fixture) are imported by
plain name; this directory is put on sys.path here so that also works under --import-mode=importlib.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dbt_harness import BuiltWarehouse


@pytest.fixture(scope="session")
def built_warehouse(fixture_warehouse) -> BuiltWarehouse:
    """edge cases + import run + non-extraction run + the 181 real pages (beside the QA and DRACO
    fixtures), after one `dbt build`; run_ids by run spec name."""
    return fixture_warehouse.family("extraction")
