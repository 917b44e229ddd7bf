"""The downstream half of every command: log -> raw (dlt) -> marts (dbt) -> serving snapshot."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.dbt_runner import NodeProgress, run_dbt
from bench.settings import load_scoring_vars
from ingest.pipeline import IngestResult, ingest_log
from warehouse.log import EventLog
from warehouse.paths import BenchPaths
from warehouse.provenance import git_sha
from warehouse.publish import publish_snapshot, table_checksums


def event_log(paths: BenchPaths) -> EventLog:
    return EventLog(paths.log_dir)


def ingest(paths: BenchPaths, *, full: bool = False) -> IngestResult:
    paths.ensure()
    return ingest_log(event_log(paths), paths.warehouse_db, paths.dlt_dir, full=full)


def build(
    paths: BenchPaths,
    *,
    warehouse_db: Path | None = None,
    scoring_vars: dict[str, Any] | None = None,
    on_progress: NodeProgress | None = None,
) -> None:
    """dbt build with `scoring_vars`, or the active ones saved by the last `bench rescore`."""
    dbt_vars = load_scoring_vars(paths) if scoring_vars is None else scoring_vars
    run_dbt(
        paths,
        ["build"],
        dbt_vars=dbt_vars or None,
        warehouse_db=warehouse_db,
        on_progress=on_progress,
    )


def publish(paths: BenchPaths) -> list[str]:
    metadata = {"scoring_vars": load_scoring_vars(paths), "git_sha": git_sha()}
    return publish_snapshot(paths.warehouse_db, paths.serve_db, metadata)


def refresh(paths: BenchPaths) -> IngestResult:
    """Load what is new, rebuild the marts, publish: what every collecting command ends with."""
    result = ingest(paths)
    build(paths)
    publish(paths)
    return result


@dataclass
class RebuildReport:
    ingest: IngestResult
    compared: dict[str, tuple[bool, tuple[int, str] | None, tuple[int, str]]]

    @property
    def identical(self) -> bool:
        return all(same for same, _, _ in self.compared.values())


def rebuild(paths: BenchPaths) -> RebuildReport:
    """A fresh warehouse from the log alone, compared table by table with the current one."""
    paths.ensure()
    fresh_db = paths.home / "warehouse.rebuild.duckdb"
    fresh_dlt = paths.home / "dlt.rebuild"
    fresh_db.unlink(missing_ok=True)
    shutil.rmtree(fresh_dlt, ignore_errors=True)
    result = ingest_log(event_log(paths), fresh_db, fresh_dlt, full=True)
    build(paths, warehouse_db=fresh_db)

    before = table_checksums(paths.warehouse_db) if paths.warehouse_db.exists() else {}
    after = table_checksums(fresh_db)
    compared = {
        table: (before.get(table) == sums, before.get(table), sums)
        for table, sums in sorted(after.items())
    }
    fresh_db.replace(paths.warehouse_db)
    shutil.rmtree(paths.dlt_dir, ignore_errors=True)
    fresh_dlt.replace(paths.dlt_dir)
    publish(paths)
    return RebuildReport(result, compared)
