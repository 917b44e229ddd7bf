"""Facts for `bench status`: log, warehouse and serving snapshot, read without writing anything."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb

from bench.errors import explain, truncation
from warehouse.lake import lake_target, open_warehouse, warehouse_exists
from warehouse.log import TORN_DIR, EventLog, ManifestCorrupt
from warehouse.log_trust import load_verification
from warehouse.paths import BenchPaths
from warehouse.publish import parts_dir


def status_rows(paths: BenchPaths) -> list[tuple[str, str]]:
    log = EventLog(paths.log_dir)
    segments = log.segments()
    seals = log.manifest()
    lines = sum(
        seal["lines"] for name, seal in seals.items() if any(s.name == name for s in segments)
    )
    unsealed = [s.name for s in segments if s.name not in seals]
    torn = (
        list((paths.log_dir / TORN_DIR).glob("*.partial"))
        if (paths.log_dir / TORN_DIR).exists()
        else []
    )
    rows = [
        (
            "log",
            f"{len(segments)} segments, {lines} events in sealed segments, {len(unsealed)} open",
        ),
        ("torn lines set aside", str(len(torn))),
    ]
    try:
        rows.append(("log head", str(log.head())))
    except ManifestCorrupt as exc:
        rows.append(("log head", f"unreadable: {exc}"))
    rows.append(("log verification", _verification_summary(paths)))
    rows.append(("warehouse", _warehouse_summary(paths)))
    rows.append(("serving snapshot", _snapshot_summary(paths)))
    rows.append(("disk", _disk_summary(paths)))
    return rows


def _bytes_under(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def _megabytes(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


DISK_PARTS = ("log", "warehouse", "snapshot", "dlt", "dbt", "caches")


def disk_usage(paths: BenchPaths) -> dict[str, int | None]:
    """Bytes on disk per part of the data root (issue #26: where a warehouse's size goes): the
    DISK_PARTS, then `warehouse_free` / `warehouse_blocks`, the blocks DuckDB freed but keeps
    inside warehouse.duckdb (a rebuilt table's) and all its blocks, None when the file cannot
    be read now. benchmarks/scale.py reports the same figures."""
    usage: dict[str, int | None] = {
        "log": _bytes_under(paths.log_dir),
        "warehouse": _bytes_under(paths.warehouse_db)
        + _bytes_under(paths.warehouse_db.with_name(paths.warehouse_db.name + ".wal")),
        # serve.duckdb holds the small marts and views; the large ones are its Parquet parts
        "snapshot": _bytes_under(paths.serve_db) + _bytes_under(parts_dir(paths.serve_db)),
        "dlt": _bytes_under(paths.dlt_dir),
        "dbt": _bytes_under(paths.dbt_dir),
        "caches": _bytes_under(paths.cache_dir) + _bytes_under(paths.corpora_dir),
        "warehouse_free": None,
        "warehouse_blocks": None,
    }
    if paths.warehouse_db.exists() and lake_target() is None:  # a lake's bytes are not ours
        try:
            with duckdb.connect(str(paths.warehouse_db), read_only=True) as con:
                block_size, total, free = con.execute(
                    "select block_size, total_blocks, free_blocks from pragma_database_size()"
                ).fetchone()
            usage["warehouse_free"], usage["warehouse_blocks"] = (
                free * block_size,
                total * block_size,
            )
        except duckdb.Error:
            pass
    return usage


def _disk_summary(paths: BenchPaths) -> str:
    usage = disk_usage(paths)
    free = usage["warehouse_free"]
    shown = [
        f"{name} {_megabytes(usage[name] or 0)}"
        + (f" ({_megabytes(free)} in free blocks)" if name == "warehouse" and free else "")
        for name in DISK_PARTS
    ]
    return " · ".join(shown) + f" · total {_megabytes(sum(usage[n] or 0 for n in DISK_PARTS))}"


def _verification_summary(paths: BenchPaths) -> str:
    verification = load_verification(paths)
    if verification is None:
        return "not checked yet (bench verify)"
    status, at = verification["status"], verification["checked_at"]
    if status == "failed":
        first = verification["problems"][0] if verification["problems"] else {}
        aside = ", ".join(verification.get("segments_set_aside", [])) or "none"
        return (
            f"FAILED at {at}: {len(verification['problems'])} problem(s), first "
            f"{_where(first)}: {first.get('kind')}; segments set "
            f"aside: {aside} (bench verify; bench verify --accept REASON)"
        )
    if status == "accepted":
        return f"accepted on the record ({len(verification['accepted'])} problem(s)), {at}"
    return f"ok at {at}"


def _where(problem: dict) -> str:
    line = problem.get("line")
    return f"{problem.get('segment')}:{line}" if line is not None else str(problem.get("segment"))


def _warehouse_summary(paths: BenchPaths) -> str:
    if not warehouse_exists(paths.warehouse_db):
        return "not built yet (bench ingest && bench build)"
    try:
        with open_warehouse(paths.warehouse_db, read_only=True) as con:
            cut = None if lake_target() else truncation(con, paths.warehouse_db)
            if cut:
                return cut
            events = con.execute("select count(*) from raw.events").fetchone()[0]
            quarantined = con.execute(
                "select count(*) from information_schema.tables "
                "where table_schema = 'raw' and table_name = 'quarantined_events'"
            ).fetchone()[0]
            if quarantined:
                quarantined = con.execute("select count(*) from raw.quarantined_events").fetchone()[
                    0
                ]
            replaced = 0
            if con.execute(
                "select count(*) from information_schema.tables "
                "where table_schema = 'raw' and table_name = 'replaced_copies'"
            ).fetchone()[0]:
                replaced = con.execute("select count(*) from raw.replaced_copies").fetchone()[0]
        lake = lake_target()
        where = f" (on the lake {lake.public_name})" if lake else ""
        # one fact stated on two machines: the copy kept is the rule's (ingest/copies.py)
        copies = (
            f"; {replaced} loaded copies replaced by another writer's (raw.replaced_copies)"
            if replaced
            else ""
        )
        return f"{events} events loaded, {quarantined} quarantined{where}{copies}"
    except duckdb.Error as exc:
        return _unreadable(exc, paths.warehouse_db)


def _unreadable(exc: BaseException, db_file: Path) -> str:
    """Corrupt (named, with the command that replaces it), held by another process, or else."""
    return explain(exc, db_file=db_file) or (
        f"unreadable right now ({type(exc).__name__}: another bench process may be writing)"
    )


def _snapshot_summary(paths: BenchPaths) -> str:
    if not paths.serve_db.exists():
        return "not published yet (bench publish)"
    published = datetime.fromtimestamp(paths.serve_db.stat().st_mtime, UTC).isoformat(
        timespec="seconds"
    )
    try:
        with duckdb.connect(str(paths.serve_db), read_only=True) as con:
            cut = truncation(con, paths.serve_db)
            if cut:
                return cut
            marts = con.execute(
                "select count(*) from information_schema.tables where table_schema = 'marts'"
            ).fetchone()[0]
            runs, shards = 0, ""
            if con.execute(
                "select count(*) from information_schema.tables where table_schema='marts' and table_name='dim_runs'"
            ).fetchone()[0]:
                runs = con.execute("select count(*) from marts.dim_runs").fetchone()[0]
                shards = _shard_progress(con)
    except duckdb.Error as exc:
        return _unreadable(exc, paths.serve_db)
    return f"{paths.serve_db} published {published}, {marts} marts, {runs} runs{shards}"


def _shard_progress(con: duckdb.DuckDBPyConnection) -> str:
    """Each run split across machines (`bench run … --shard K/N`): how many of its shards have
    finished, from what the machines have loaded so far. A snapshot from before the column
    existed says nothing."""
    has_column = con.execute(
        "select count(*) from information_schema.columns where table_schema = 'marts' "
        "and table_name = 'dim_runs' and column_name = 'n_shards'"
    ).fetchone()[0]
    if not has_column:
        return ""
    rows = con.execute(
        "select run_id, n_shards_finished, n_shards, status from marts.dim_runs "
        "where n_shards is not null order by run_id"
    ).fetchall()
    return "".join(
        f"; run {run_id}: {done} of {total} shards finished ({status})"
        for run_id, done, total, status in rows
    )
