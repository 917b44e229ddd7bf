"""Fixtures for the dbt project tests: a warehouse built once per session from synthetic events.

The helper modules of this folder (dbt_harness, extraction_*, raw_events_fixture) are imported by
plain name; this directory is put on sys.path here so that also works under --import-mode=importlib.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dbt_harness import BuiltWarehouse, run_dbt
from extraction_cases import edge_case_runs, real_data_run
from raw_events_fixture import PRODUCER, Clock, insert_events

from warehouse.events import ExtractionCompleted, make_event


@pytest.fixture(scope="session")
def built_warehouse(tmp_path_factory) -> BuiltWarehouse:
    """edge cases + import run + non-extraction run + the 181 real pages, then `dbt build`."""
    work = tmp_path_factory.mktemp("dbt_build")
    db_path = work / "warehouse.duckdb"
    clock = Clock()
    edge_events = edge_case_runs(clock)
    real = real_data_run(clock)
    edge_run_id = next(e.run_id for e in edge_events if e.event_type == "run_started")
    # an output for an item the run never registered: cannot be scored, must be warned about
    orphan = make_event(
        ExtractionCompleted(
            item_id="ghost",
            system="alpha",
            system_version="1.0",
            attempt=1,
            source="engine",
            render_path=None,
            input_sha256=None,
            output_text="boo",
            output_bytes=3,
        ),
        run_id=edge_run_id,
        producer=PRODUCER,
        occurred_at="2026-11-30T12:00:02.500000Z",
    )
    insert_events(db_path, [*edge_events, orphan, *real.events])
    # the same events loaded twice into raw (e.g. an append instead of a merge): staging dedupes
    insert_events(db_path, edge_events[:5], segment="zz-duplicate.jsonl")
    result = run_dbt(["build"], db_path, work)
    run_ids = {
        event.payload["spec"]["name"]: event.run_id
        for event in edge_events + real.events
        if event.event_type == "run_started"
    }
    return BuiltWarehouse(db_path, work, run_ids, result.stdout)
