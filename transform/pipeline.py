"""The downstream half of every command: log -> raw (dlt) -> marts (dbt) -> serving snapshot."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ingest.pipeline import IngestResult, ingest_log
from transform.dbt_build import dbt_build, mark_published, models_built_since_publish
from transform.dbt_runner import NodeProgress
from transform.state import (
    CARRIED_BY_REBUILD,
    fingerprint_file,
    load_scoring_vars,
    project_fingerprint,
    unpublished_file,
)
from warehouse.lake import (
    LakeError,
    lake_target,
    last_published,
    open_warehouse,
    published_state,
    record_published,
    this_process,
    warehouse_exists,
)
from warehouse.log import EventLog
from warehouse.log_bucket import (
    BUCKET_ENV,
    LogBucket,
    LogBucketError,
    PushResult,
    WriterLog,
    hold,
    mirrored_logs,
    push,
    writer_id,
)
from warehouse.log_trust import (
    LogVerificationFailed,
    check_log,
    head_to_publish,
    load_verification,
    record_head,
)
from warehouse.paths import BenchPaths
from warehouse.provenance import git_sha
from warehouse.publish import checksums_of, publish_snapshot, table_checksums
from warehouse.signing import public_key_from
from warehouse.verify import VerifyReport


def event_log(paths: BenchPaths) -> EventLog:
    return EventLog(paths.log_dir)


def ingest(paths: BenchPaths, *, full: bool = False) -> IngestResult:
    """Verify the log (chain, seals, tree against every held head: heads.jsonl's last and
    the snapshot's), then load what verifies. The result's `verification` says what was set
    aside; callers fail on it."""
    paths.ensure()
    report = check_log(paths)
    log = event_log(paths)
    # A MANIFEST that no longer extends a held head (or heads.jsonl deleted beside a snapshot)
    # cannot say which segment is to blame: nothing new is loaded until the log verifies or
    # the change is accepted.
    hold = {s.name for s in log.segments()} if report.manifest_failed else set()
    purge = set(report.failed_segments)
    writers = writer_logs(paths)
    for writer in writers:
        hold |= writer.held_back()
        purge |= writer.report.failed_segments
    result = ingest_log(
        [log, *(writer.log for writer in writers)],
        paths.warehouse_db,
        paths.dlt_dir,
        full=full,
        skip_segments=hold,
        purge_segments=purge,
    )
    result.verification = report
    result.writers = writers
    _hold_writer_heads(paths, writers)
    result.compressed_segments = compress_verified(paths, log, report)
    return result


def _hold_writer_heads(paths: BenchPaths, writers: list[WriterLog]) -> None:
    """After a load of the bucket's logs: every later copy of a writer's log that verified
    must extend the head loaded now (warehouse.log_bucket.hold)."""
    for writer in writers:
        hold(paths, writer)


def writer_logs(paths: BenchPaths, *, fast: bool = True) -> list[WriterLog]:
    """Every other writer's log from the log bucket (BENCH_LOG_BUCKET), copied and verified;
    [] without a bucket (warehouse/log_bucket.py)."""
    bucket = LogBucket.from_env()
    if bucket is None:
        return []
    return mirrored_logs(paths, bucket, fast=fast, public_key=public_key_from(None))


def push_log(paths: BenchPaths, url: str | None = None) -> PushResult:
    """Upload this data root's sealed segments and MANIFEST to the log bucket `url` (default
    BENCH_LOG_BUCKET)."""
    bucket = LogBucket.open(url) if url else LogBucket.from_env()
    if bucket is None:
        raise LogBucketError(
            f"no log bucket: set {BUCKET_ENV} (e.g. s3://bucket/bench-log, or a shared folder)"
        )
    return push(event_log(paths), bucket, writer_id(paths))


def compress_verified(paths: BenchPaths, log: EventLog, report: VerifyReport) -> int:
    """Store the sealed segments just verified and loaded compressed, then trust the head that
    holds their `compress` records (EventLog.compress_sealed): only after an intact
    verification, so a later fast verification that takes a compressed file by its recorded
    digest relies on a record a trusted head already covers."""
    if not report.intact:
        return 0
    compressed = log.compress_sealed()
    if compressed:
        record_head(paths, log.head(), "compressed")
    return len(compressed)


def has_events(paths: BenchPaths) -> bool:
    """Whether the warehouse holds a raw.events table yet (a fresh home does not)."""
    if not warehouse_exists(paths.warehouse_db):
        return False
    with open_warehouse(paths.warehouse_db, read_only=True) as con:
        return bool(
            con.execute(
                "select count(*) from information_schema.tables "
                "where table_schema = 'raw' and table_name = 'events'"
            ).fetchone()[0]
        )


def build(
    paths: BenchPaths,
    *,
    warehouse_db: Path | None = None,
    scoring_vars: dict[str, Any] | None = None,
    select: list[str] | None = None,
    with_unit_tests: bool = False,
    on_progress: NodeProgress | None = None,
) -> bool:
    """dbt build with `scoring_vars`, or the active ones saved by the last `bench rescore`;
    incremental, data tests only unless `with_unit_tests` (transform/dbt_build.py). False when
    nothing arrived since the last build."""
    dbt_vars = load_scoring_vars(paths) if scoring_vars is None else scoring_vars
    return dbt_build(
        paths,
        warehouse_db=warehouse_db,
        dbt_vars=dbt_vars,
        select=select,
        with_unit_tests=with_unit_tests,
        on_progress=on_progress,
    )


def publish(paths: BenchPaths) -> list[str]:
    """The snapshot records the log head it holds and the last verification. The head is the
    log's current one only when the log verified and still extends every held head; else the
    head already held is carried forward (`head_to_publish`), so a rewritten log never gets
    its head into the snapshot by a publish."""
    verification = load_verification(paths) or {}
    head, is_current = head_to_publish(paths, verification)
    metadata = {
        "scoring_vars": load_scoring_vars(paths),
        "git_sha": git_sha(),
        "log_head": head.to_json() if head else None,
        "log_head_trusted": True,  # later logs must extend log_head (log_trust.snapshot_head)
        "log_verification": {
            "status": verification.get("status", "not checked"),
            "checked_at": verification.get("checked_at"),
            "problems": len(verification.get("problems", [])),
            "segments_set_aside": verification.get("segments_set_aside", []),
        },
        "lake": published_state(paths.warehouse_db),  # None: the local warehouse file
    }
    lake = metadata["lake"]
    tables = publish_snapshot(
        paths.warehouse_db,
        paths.serve_db,
        metadata,
        changed=models_built_since_publish(paths.warehouse_db),
        generation=_publish_generation(paths),
        lake_snapshot=lake["snapshot_id"] if lake else None,
    )
    mark_published(paths.warehouse_db)
    if lake:  # readers on other machines pull this snapshot (`bench pull`)
        record_published(lake_target(), lake["snapshot_id"], metadata)
    if is_current:
        record_head(paths, head, "published")
    return tables


def pull(paths: BenchPaths) -> tuple[int, list[str]]:
    """A reader's copy of what was last published on the lake (any machine's publish): the
    marts as they were at that lake snapshot, into this data root's snapshot, which the app,
    `bench sql` and `bench export` read. Returns the snapshot id and the tables."""
    target = lake_target()
    if target is None:
        raise LakeError(
            "bench pull reads a lake: set BENCH_WAREHOUSE=ducklake:... and BENCH_LAKE_DATA "
            "(docs/team.md); a local warehouse is published with `bench publish`"
        )
    published = last_published(target)
    if published is None:
        raise LakeError(f"nothing has been published on the lake {target.public_name} yet")
    snapshot_id, metadata = published
    paths.ensure()
    tables = publish_snapshot(
        paths.warehouse_db,
        paths.serve_db,
        {**metadata, "pulled_by": this_process()},
        generation=f"{target.public_name}@{snapshot_id}",
        lake_snapshot=snapshot_id,
    )
    return snapshot_id, tables


def _publish_generation(paths: BenchPaths) -> str:
    """What decides a published row besides the events it comes from: the models, the code that
    loaded the events (its upcasters), and the warehouse they were loaded into (a rebuild makes
    a new one, named by its first load). The snapshot adds new rows to parts of the same
    generation only (warehouse/publish.py)."""
    try:
        with open_warehouse(paths.warehouse_db, read_only=True) as con:
            first_load = con.execute("select min(_dlt_load_id) from raw.events").fetchone()[0]
    except duckdb.Error:
        first_load = None
    return f"{project_fingerprint()}:{git_sha()}:{first_load}"


def publish_pending(paths: BenchPaths) -> bool:
    """Publish a build that was never published (a command killed between its build and its
    publish); False when the snapshot already holds the last build."""
    if not paths.warehouse_db.exists():
        return False
    unpublished = models_built_since_publish(paths.warehouse_db)
    if unpublished is not None and not unpublished:
        return False
    publish(paths)
    return True


def refresh(paths: BenchPaths) -> IngestResult:
    """Load what is new, rebuild the marts, publish: what every collecting command ends with.
    A log that fails verification is still published without its failing segments (the app
    shows a banner), then the command fails."""
    result = ingest(paths)
    build(paths)
    publish(paths)
    if result.verification is not None and not result.verification.intact:
        raise LogVerificationFailed(result.verification, "loaded what verifies")
    return result


@dataclass
class RebuildReport:
    ingest: IngestResult
    compared: dict[str, tuple[bool, tuple[int, str] | None, tuple[int, str]]]

    @property
    def identical(self) -> bool:
        return all(same for same, _, _ in self.compared.values())


def rebuild(paths: BenchPaths) -> RebuildReport:
    """A fresh warehouse from the log alone, compared table by table with the current one.
    Refused outright when the log fails verification (full content hashes too). A current
    warehouse that cannot be opened (corrupt) is replaced; nothing `*.rebuild.*` is left."""
    paths.ensure()
    report = check_log(paths, fast=False)
    if not report.intact:
        raise LogVerificationFailed(report, "rebuild refused")
    writers = writer_logs(paths, fast=False)
    for writer in writers:
        if not writer.report.intact:
            raise LogVerificationFailed(
                writer.report, f"rebuild refused: the log of writer {writer.writer} in the bucket"
            )
    if lake_target() is not None:
        return _rebuild_on_the_lake(paths, report, writers)
    fresh_db = paths.home / "warehouse.rebuild.duckdb"
    fresh_dlt = paths.home / "dlt.rebuild"
    _remove_rebuild_leftovers(paths)
    try:
        result = ingest_log(
            [event_log(paths), *(writer.log for writer in writers)],
            fresh_db,
            fresh_dlt,
            full=True,
            purge_segments=report.failed_segments,
        )
        result.verification = report
        _hold_writer_heads(paths, writers)
        result.compressed_segments = compress_verified(paths, event_log(paths), report)
        build(paths, warehouse_db=fresh_db)
        before = _checksums_or_nothing(paths.warehouse_db)
        after = table_checksums(fresh_db)
        compared = {
            table: (before.get(table) == sums, before.get(table), sums)
            for table, sums in sorted(after.items())
        }
        for stale in (
            paths.warehouse_db,
            paths.warehouse_db.with_name(paths.warehouse_db.name + ".wal"),
        ):
            stale.unlink(missing_ok=True)
        fresh_db.replace(paths.warehouse_db)
        for marker in CARRIED_BY_REBUILD:
            if marker(fresh_db).exists():
                marker(fresh_db).replace(marker(paths.warehouse_db))
        unpublished_file(paths.warehouse_db).unlink(missing_ok=True)  # a new file: publish all
        shutil.rmtree(paths.dlt_dir, ignore_errors=True)
        fresh_dlt.replace(paths.dlt_dir)
    finally:
        _remove_rebuild_leftovers(paths)
    publish(paths)
    return RebuildReport(result, compared)


def _rebuild_on_the_lake(
    paths: BenchPaths, report: VerifyReport, writers: list[WriterLog]
) -> RebuildReport:
    """A lake is shared: other machines load into it, so its raw tables are not this data
    root's to replace. Here a rebuild reads every log this data root can verify (its own and
    each writer's in the log bucket) again, loading what the lake lacks (insert-only: nothing
    twice), then builds every model from scratch and compares each mart with the lake as it
    was before (DuckLake time travel: `AT (VERSION => n)`)."""
    before_version = published_state(paths.warehouse_db)["snapshot_id"]
    log = event_log(paths)
    result = ingest_log(
        [log, *(writer.log for writer in writers)],
        paths.warehouse_db,
        paths.dlt_dir,
        full=True,
        purge_segments=report.failed_segments,
    )
    result.verification = report
    _hold_writer_heads(paths, writers)
    result.compressed_segments = compress_verified(paths, log, report)
    fingerprint_file(paths.warehouse_db).unlink(missing_ok=True)  # every model, from scratch
    build(paths)
    with open_warehouse(paths.warehouse_db, read_only=True) as con:
        before = checksums_of(con, at_version=before_version)
        after = checksums_of(con)
    publish(paths)
    compared = {
        table: (before.get(table) == sums, before.get(table), sums)
        for table, sums in sorted(after.items())
    }
    return RebuildReport(result, compared)


def _remove_rebuild_leftovers(paths: BenchPaths) -> None:
    for leftover in paths.home.glob("*.rebuild*"):
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)


def _checksums_or_nothing(db: Path) -> dict[str, tuple[int, str]]:
    """The current warehouse's mart checksums; {} when there is none or it cannot be read (a
    corrupt file is exactly what a rebuild replaces)."""
    import duckdb

    if not db.exists():
        return {}
    try:
        return table_checksums(db)
    except duckdb.Error:
        return {}
