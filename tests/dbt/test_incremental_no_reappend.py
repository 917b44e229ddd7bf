"""Every incremental model reads only what it has not seen: a second build on the same data adds
nothing anywhere. And a build that spills to disk passes.

An incremental model without its new-batch filter (macros/incremental_events.sql:
`only_new_loads()`) gives no error when it re-appends its whole input: only a uniqueness test
fails, later, for the user (issue #25: the second `bench import draco-results` failed
`unique_stg_events__imported_verdict_imported_verdict_event_id`). This check is generic: it
lists the incremental models from dbt's manifest, so a model added without the filter fails
here. The fixture warehouse holds real events of the three families; event types it lacks get
one synthetic event each in a later batch, so every staging model has rows to re-append.

The first build runs under a memory limit small enough that DuckDB spills to its temp
directory, with two threads. dbt-duckdb re-applies a profile's `settings:` on every new cursor,
and after a spill DuckDB refuses to set temp_directory again ("Cannot switch temporary directory
after the current one has been used", duckdb/dbt-duckdb#600): with the options under
`settings:` this build failed at this limit (measured at bcb0fc2: `int_extraction_outputs_normalized`
and every model after it); profiles.yml now gives them once per connection (`config_options`).
The test proves the spill happened: DuckDB creates its temp directory on the first spill only
and removes it when the connection closes, so a watcher looks for it while dbt runs.

The limit is 150MB. At 100MB the fixture build spilled and passed on an idle machine, but on a
busy one (CI; three builds at once here) two models running side by side under dbt's two
threads ran out of the memory DuckDB cannot spill (int_extraction_pages_shingled,
int_qa_answers_scored: "could not allocate block ... 95.3 MiB used"), 2 failures in 3. At 150MB
3 of 3 passed under the same load, each spilling; at 300MB nothing spills.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest
from dbt_harness import run_dbt

from warehouse.events import PAYLOAD_MODELS

pytestmark = pytest.mark.slow

INCREMENTAL = ["--select", "config.materialized:incremental"]
SPILLING = {"BENCH_DBT_MEMORY_LIMIT": "150MB", "BENCH_DBT_DUCKDB_THREADS": "2"}


@contextmanager
def _spills_seen(temp_directory: Path) -> Iterator[list[Path]]:
    """Watches for DuckDB's temp directory while the block runs; the list holds it once seen."""
    seen: list[Path] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if temp_directory.exists():
                seen.append(temp_directory)
                return
            time.sleep(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield seen
    finally:
        done.set()
        watcher.join()


def _incremental_models(work) -> dict[str, str]:
    """name -> schema.name of every incremental model, from the manifest of the last dbt call."""
    manifest = json.loads((work / "target" / "manifest.json").read_text(encoding="utf-8"))
    return {
        node["name"]: f"{node['schema']}.{node['alias']}"
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model" and node["config"]["materialized"] == "incremental"
    }


def _row_counts(db, tables: dict[str, str]) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {
            name: con.execute(f"select count(*) from {table}").fetchone()[0]
            for name, table in tables.items()
        }


def _add_one_event_of_each_missing_type(db) -> list[str]:
    """One synthetic event per event type raw.events lacks, in a batch after every other."""
    with duckdb.connect(str(db)) as con:
        present = {
            row[0] for row in con.execute("select distinct event_type from raw.events").fetchall()
        }
        missing = sorted(set(PAYLOAD_MODELS) - present)
        for n, event_type in enumerate(missing):
            con.execute(
                "insert into raw.events (event_id, event_type, schema_version, "
                "stored_schema_version, run_id, occurred_at, producer, payload, content_sha256, "
                "prev_sha256, segment, line_no, _dlt_load_id) values (?, ?, 1, 1, 'synthetic-run', "
                "'2026-12-05T00:00:00Z', '{}', '{}', '', '', 'zz-synthetic.jsonl', ?, "
                "'zz-synthetic-batch')",
                [f"synthetic-{event_type}", event_type, n + 1],
            )
    return missing


def test_a_build_that_spills_passes_and_a_second_build_adds_no_row_to_any_incremental_model(
    fixture_warehouse, tmp_path, monkeypatch
):
    db = tmp_path / "warehouse.duckdb"
    shutil.copy(fixture_warehouse.path, db)
    added = _add_one_event_of_each_missing_type(db)
    work = tmp_path / "work"

    for name, value in SPILLING.items():
        monkeypatch.setenv(name, value)
    temp_directory = tmp_path / "dbt" / "duckdb_tmp"  # run_dbt's BENCH_DBT_TEMP_DIR
    with _spills_seen(temp_directory) as spilled:
        run_dbt(["run", "--full-refresh"], db, work)  # every model
    assert spilled, f"the build never spilled: no {temp_directory} while it ran"
    assert not temp_directory.exists()  # DuckDB removed it on close: the watcher saw a spill
    monkeypatch.delenv("BENCH_DBT_MEMORY_LIMIT")
    models = _incremental_models(work)
    first = _row_counts(db, models)
    run_dbt(["run", *INCREMENTAL], db, work)  # nothing new: must add nothing
    second = _row_counts(db, models)

    grown = {name: (first[name], second[name]) for name in models if second[name] != first[name]}
    assert not grown, f"incremental models re-appended rows (before, after): {grown}"
    # The check bites only where there are rows to re-append: every staging model has some.
    empty = sorted(n for n, count in first.items() if count == 0 and n.startswith("stg_"))
    assert not empty, f"no rows to re-append in {empty} (synthetic types added: {added})"
    assert len([n for n in models if n.startswith("stg_events__")]) >= 25
    # ... and in the per-run DRACO models, the rubric scored at both grains included
    assert first["int_draco_rubric_scored"] > first["int_draco_items_scored"] > 0
