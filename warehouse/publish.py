"""Publish by swap: write the marts into a fresh file, then `os.replace` it onto serve.duckdb.

Readers that hold the old file keep reading the old inode; new readers see the new snapshot.
Nothing ever writes serve.duckdb in place.

Large marts (a 1M-verdict warehouse has a few tables of a million rows, payloads included) are
not copied into serve.duckdb on every publish: each is written once as a Parquet part file in
`serve.parts/`, and serve.duckdb holds a view over it with the table's exact column types. A
publish rewrites a part only when the table changed since the part was written (`changed`: the
models dbt built since the last publish), so a rescore that rebuilds a few leaderboards writes a
few small tables, not the whole snapshot. Any DuckDB client that opens serve.duckdb sees the
same schema either way. Parts referenced by neither the new nor the previous snapshot are
removed (a reader may still be in a query over the previous one).

An append-only table (`APPEND_ONLY`: dim_events, one row per immutable event) is published by
increments: its rows that no earlier part holds become one more part, and the view reads them
all, so a +1,000-event publish writes 1,000 rows, not a million payloads. The increment is kept
only while it provably adds up (the parts hold the same columns, were written by the same
`generation` of the models, and their rows plus the new ones are the table's count: a rebuild,
a lost segment or a changed model gives a whole new part instead); every `MAX_PARTS` the
table's parts are written again as one.

Memory is bounded like the build's (issue #26: a 1M-verdict publish peaked at 11.5-12.3 GB
RSS): the warehouse connection gets the memory limit and thread count of the build's DuckDB
connections (dbt_project/profiles.yml `config_options`, BENCH_DBT_MEMORY_LIMIT, default 3GB)
and spills past it into the build's temp folder. Given once, to `duckdb.connect`: DuckDB
refuses to switch temp_directory after a spill, even to the same path (stack notes).
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from warehouse.lake import lake_target, open_warehouse

PUBLISHED_SCHEMAS = ("marts",)
# The build's DuckDB settings live in one place, the dbt profile's `config_options`; publish
# reads them from there (package data beside warehouse/, like bench.settings.DBT_PROJECT_DIR).
PROFILES_YML = Path(__file__).resolve().parent.parent / "dbt_project" / "profiles.yml"
# The options of the build's DuckDB connections that publish and ingest apply as dbt does
CONNECTION_OPTIONS = ("memory_limit", "threads", "temp_directory", "storage_compatibility_version")
_ENV_VAR = re.compile(r"\{\{\s*env_var\(\s*'([^']+)'\s*(?:,\s*'([^']*)'\s*)?\)\s*\}\}")
# A table this large is published as a Parquet part (re-written only when it changed); smaller
# ones are copied into serve.duckdb on every publish, which costs less than tracking them.
# Rows are a poor measure of bytes where a row holds a report: at 1M verdicts fct_draco_reports
# is 8,487 rows and 130 MB, and copying it made every publish 3 s longer (+1,000 publish 8.2 s at
# 50,000, 5.9 s at 5,000; nothing changed: 4.5-5.1 s against 1.4-1.7 s; the slowest app page the
# same, 1.22 s). BENCH_PUBLISH_PART_MIN_ROWS overrides it, read at each publish (part_min_rows).
PART_MIN_ROWS = 5_000
PARTS_TABLE = "_publish_parts"
# Tables whose rows never change once written, with the key that tells a new row: published by
# increments (module docstring). dim_events is a view over the event log's rows, and a row's
# place in the log is its key: new events sit in new segments or at the end of open ones, so
# selecting them by (segment, line_no) lets DuckDB skip the older segments' row groups. At 1M
# events, the 1,000 new rows' payloads are read in 0.28 s by place, 2.6 s by event_id, and an
# anti join of the whole view (every payload read) took 4.9 s.
APPEND_ONLY = {"marts.dim_events": ("segment", "line_no")}
MAX_PARTS = 8  # parts of one table before they are written again as one (each costs readers a file)
# Lineage pages read a few rows by run and event type; Parquet skips row groups by their min/max
# statistics but decodes a whole group to read its payload column. Groups of 16k rows (DuckDB's
# default is 122,880) make a 1M-event dim_events query for one run's relevance grades 5x faster
# (0.72 s -> 0.14 s) at the same file size.
PART_ROW_GROUP_ROWS = 16_384


def part_min_rows() -> int:
    """Read at each publish, not at import: a process that lives on (the app, a test's
    in-process `bench`) sees the setting of the call."""
    return int(os.environ.get("BENCH_PUBLISH_PART_MIN_ROWS", PART_MIN_ROWS))


def parts_dir(serve_db: Path) -> Path:
    return serve_db.with_name(serve_db.name.removesuffix(".duckdb") + ".parts")


def publish_snapshot(
    warehouse_db: Path,
    serve_db: Path,
    metadata: dict[str, Any],
    *,
    changed: Collection[str] | None = None,
    generation: str = "",
    lake_snapshot: int | None = None,
) -> list[str]:
    """Publish every table of the published schemas; returns the table names published.

    `changed`: names of the tables rebuilt since the last publish (None = all of them). A large
    table not in it keeps the part files the previous snapshot used. `generation`: what decides
    the tables' contents besides the data (the models' fingerprint): an append-only table's
    parts of another generation are not added to. `lake_snapshot`: on a lake, the snapshot
    to read (the one the publish records), whatever a build commits meanwhile."""
    _remove_orphans(serve_db)
    tmp = serve_db.with_name(f"{serve_db.name}.tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    previous_parts = snapshot_parts(serve_db)
    parts: dict[str, list[Part]] = {}
    published: list[str] = []
    try:
        # Connect to the warehouse (not ATTACH it): an instance dbt left open in this process
        # would make ATTACH fail with a file-handle conflict.
        with _connect_bounded(warehouse_db, lake_snapshot) as con:
            quoted = str(tmp).replace("'", "''")  # ATTACH takes no parameters
            con.execute(f"attach '{quoted}' as serve")
            min_part_rows = part_min_rows()
            for schema in PUBLISHED_SCHEMAS:
                con.execute(f"create schema serve.{schema}")
                for table, rows, exact in _tables(con, schema):
                    name = f"{schema}.{table}"
                    if rows >= min_part_rows:
                        unchanged = changed is not None and table not in changed
                        parts[name] = _table_parts(
                            con,
                            schema,
                            table,
                            rows if exact else None,
                            previous_parts.get(name, []),
                            reuse=unchanged,
                            generation=generation,
                            directory=parts_dir(serve_db),
                        )
                        _create_part_view(con, schema, table, [p.path for p in parts[name]])
                    else:
                        con.execute(
                            f'create table serve.{schema}."{table}" as '
                            f'select * from {schema}."{table}"'
                        )
                    published.append(name)
            con.execute("create table serve.main._publish (published_at varchar, metadata json)")
            con.execute(
                "insert into serve.main._publish values (?, ?)",
                [datetime.now(UTC).isoformat(), json.dumps(metadata, sort_keys=True)],
            )
            con.execute(
                f"create table serve.main.{PARTS_TABLE} "
                "(table_name varchar, path varchar, row_count bigint, generation varchar)"
            )
            rows_of_parts = [
                (name, part.path, part.rows, part.generation)
                for name, table_parts in sorted(parts.items())
                for part in table_parts
            ]
            if rows_of_parts:
                con.executemany(
                    f"insert into serve.main.{PARTS_TABLE} values (?, ?, ?, ?)", rows_of_parts
                )
            con.execute("detach serve")
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, serve_db)
    finally:
        tmp.unlink(missing_ok=True)
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
    keep = {
        p.path for table_parts in (*parts.values(), *previous_parts.values()) for p in table_parts
    }
    _remove_unreferenced_parts(serve_db, keep=keep)
    return published


@dataclass(frozen=True)
class Part:
    path: str
    rows: int
    generation: str


def _table_parts(
    con: duckdb.DuckDBPyConnection,
    schema: str,
    table: str,
    counted_rows: int | None,
    previous: list[Part],
    *,
    reuse: bool,
    generation: str,
    directory: Path,
) -> list[Part]:
    """The part files the new snapshot reads for a large table: the previous ones when the
    table did not change, the previous ones and an increment for an append-only table whose
    parts add up, else one new part of the whole table."""
    present = bool(previous) and all(Path(p.path).exists() for p in previous)
    if reuse and present:
        return previous
    key = APPEND_ONLY.get(f"{schema}.{table}")
    appendable = (
        key is not None
        and present
        and len(previous) < MAX_PARTS
        and all(p.generation == generation for p in previous)
    )
    if appendable:
        increment = _increment(con, schema, table, key, counted_rows, previous, directory)
        if increment is not None:
            return [*previous, *increment]
    return [
        _write_part(con, f'select * from {schema}."{table}"', schema, table, directory, generation)
    ]


def _increment(
    con: duckdb.DuckDBPyConnection,
    schema: str,
    table: str,
    key: tuple[str, ...],
    counted_rows: int | None,
    previous: list[Part],
    directory: Path,
) -> list[Part] | None:
    """The table's rows no previous part holds, as a new part ([] when there are none); None
    when the parts and the increment would not hold exactly the table (the caller writes it
    whole)."""
    files = _parquet_list([p.path for p in previous])
    if not _same_columns(con, schema, table, files):
        return None
    using = ", ".join(f'"{column}"' for column in key)
    # the new keys first (key columns only, no payload read), then their rows by a semi join
    con.execute(
        f'create or replace temp table _new_keys as select {using} from {schema}."{table}" '
        f"anti join read_parquet({files}) using ({using})"
    )
    added = con.execute("select count(*) from _new_keys").fetchone()[0]
    # a table's row count from _tables is DuckDB's estimate (deletes not seen): counted here
    rows = counted_rows
    if rows is None:
        rows = con.execute(f'select count(*) from {schema}."{table}"').fetchone()[0]
    if sum(p.rows for p in previous) + added != rows:
        return None
    if added == 0:
        return []
    new_rows = f'select t.* from {schema}."{table}" as t semi join _new_keys using ({using})'
    return [_write_part(con, new_rows, schema, table, directory, previous[0].generation)]


def _same_columns(con: duckdb.DuckDBPyConnection, schema: str, table: str, files: str) -> bool:
    in_parts = [
        name for name, *_ in con.execute(f"describe select * from read_parquet({files})").fetchall()
    ]
    return in_parts == _column_names(con, schema, table)


def _column_names(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[str]:
    return [name for name, _kind in _columns(con, schema, table)]


def _parquet_list(paths: list[str]) -> str:
    """A SQL list of file names (read_parquet takes no parameters)."""
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


def create_database(db_path: Path) -> None:
    """Create the DuckDB file `db_path`, if it is missing, in the storage format the build's
    connections create files in (profiles.yml `storage_compatibility_version`). A file's format
    is fixed in its header by whoever creates it, and ingest's dlt connection, which creates the
    warehouse, takes no such option. Written aside and renamed: a kill leaves no half file."""
    if db_path.exists():
        return
    version = duckdb_config(db_path).get("storage_compatibility_version")
    config = {"storage_compatibility_version": version} if version else {}
    db_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = db_path.with_name(f"{db_path.name}.new-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    duckdb.connect(str(tmp), config=config).close()
    os.replace(tmp, db_path)


def duckdb_config(warehouse_db: Path) -> dict[str, str]:
    """memory_limit, threads, temp_directory and the storage format of new files, as the build's
    DuckDB connections get them:
    profiles.yml's `config_options` with the environment's values (BENCH_DBT_MEMORY_LIMIT,
    BENCH_DBT_DUCKDB_THREADS) or the profile's defaults. bench gives dbt a temp folder relative
    to the data root (BENCH_DBT_TEMP_DIR=dbt/duckdb_tmp, the warehouse's folder); the profile's
    own default is for dbt run by hand from the repo root, so without the variable publish
    spills where bench's builds do: dbt/duckdb_tmp beside the warehouse."""
    import yaml

    (profile,) = yaml.safe_load(PROFILES_YML.read_text(encoding="utf-8")).values()
    # the local file's target (the profile's default), not the lake's
    options: dict[str, object] = profile["outputs"][profile["target"]].get("config_options") or {}
    config: dict[str, str] = {}
    for name in CONNECTION_OPTIONS:
        if name not in options:
            continue
        text = str(options[name])
        match = _ENV_VAR.fullmatch(text.strip())
        if match and name == "temp_directory":
            given = os.environ.get(match.group(1))
            text = given if given else str(Path("dbt") / "duckdb_tmp")
        elif match:
            text = os.environ.get(match.group(1)) or match.group(2) or ""
        if name == "temp_directory":
            text = str(warehouse_db.resolve().parent / text)  # no-op for an absolute path
        config[name] = text
    return config


def _connect_bounded(
    warehouse_db: Path, lake_snapshot: int | None = None
) -> duckdb.DuckDBPyConnection:
    config = duckdb_config(warehouse_db)
    if "temp_directory" in config:
        Path(config["temp_directory"]).mkdir(parents=True, exist_ok=True)
    if lake_target() is not None:  # the lake, read into the local snapshot (docs/team.md)
        con = open_warehouse(warehouse_db, read_only=True, snapshot=lake_snapshot)
        for name in ("memory_limit", "threads", "temp_directory"):
            if name in config:
                con.execute(f"set {name} = '{config[name]}'")
        return con
    try:
        return duckdb.connect(str(warehouse_db), config=config)
    except duckdb.ConnectionException as exc:
        # This process already holds the warehouse open (DuckDB then reuses that instance and
        # refuses a different configuration): publish within that instance's own settings.
        if "different configuration" not in str(exc):
            raise
        return duckdb.connect(str(warehouse_db))


_SIZE_UNITS = {"bytes": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
_SIZE_UNITS |= {"kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}


def _memory_limit_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """The connection's memory limit as DuckDB reports it ('953.6 MiB'), in bytes."""
    (text,) = con.execute("select current_setting('memory_limit')").fetchone()
    match = re.fullmatch(r"\s*([\d.]+)\s*([A-Za-z]*)\s*", str(text))
    if not match:
        return 1 << 30
    return int(float(match.group(1)) * _SIZE_UNITS.get(match.group(2).lower() or "bytes", 1))


def _tables(con: duckdb.DuckDBPyConnection, schema: str) -> list[tuple[str, int, bool]]:
    """(table or view, row count, whether the count is exact) of the warehouse's relations in
    `schema`. A table's count is DuckDB's stored cardinality (no scan; deleted rows still in
    it); a view's (dim_events: the payloads stay in raw.events) is counted, and the snapshot
    gets its rows, not the view."""
    tables = con.execute(
        "select table_name, estimated_size, false from duckdb_tables() "
        "where schema_name = ? and database_name = current_database()",
        [schema],
    ).fetchall()
    views = con.execute(
        "select view_name from duckdb_views() "
        "where schema_name = ? and database_name = current_database() and not internal",
        [schema],
    ).fetchall()
    counted = [
        (view, con.execute(f'select count(*) from {schema}."{view}"').fetchone()[0], True)
        for (view,) in views
    ]
    return sorted([*tables, *counted])


def _write_part(
    con: duckdb.DuckDBPyConnection,
    select: str,
    schema: str,
    table: str,
    directory: Path,
    generation: str,
) -> Part:
    """The rows of `select` (of the table) as a new Parquet file (a new name each time: the old
    one may be in use)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{schema}.{table}.{uuid.uuid4().hex[:12]}.parquet"
    quoted = str(path).replace("'", "''")
    # A row group is buffered whole per writing thread: 16k rows of 5-20 kB payloads is more
    # than a small memory limit holds (150 MB failed with "failed to allocate"), so groups are
    # also cut at a sixteenth of the limit. DuckDB cuts by bytes only without insertion order;
    # a part is a set of rows either way (readers order by their own columns).
    group_bytes = max(1 << 20, _memory_limit_bytes(con) // 16)
    con.execute("set preserve_insertion_order = false")
    try:
        con.execute(
            f"copy ({select}) to '{quoted}' "
            f"(format parquet, compression zstd, row_group_size {PART_ROW_GROUP_ROWS}, "
            f"row_group_size_bytes {group_bytes})"
        )
    finally:
        con.execute("reset preserve_insertion_order")
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
    rows = con.execute(f"select count(*) from read_parquet('{quoted}')").fetchone()[0]
    return Part(str(path), rows, generation)


def _columns(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[tuple[str, str]]:
    return con.execute(
        "select column_name, data_type from duckdb_columns() where schema_name = ? "
        "and table_name = ? and database_name = current_database() order by column_index",
        [schema, table],
    ).fetchall()


def _create_part_view(
    con: duckdb.DuckDBPyConnection, schema: str, table: str, parts: list[str]
) -> None:
    """A view with the table's own column names and types (Parquet has no JSON type, say)."""
    select = ", ".join(
        f'cast("{name}" as {kind}) as "{name}"' for name, kind in _columns(con, schema, table)
    )
    con.execute(
        f'create view serve.{schema}."{table}" as select {select} '
        f"from read_parquet({_parquet_list(parts)})"
    )


def snapshot_parts(serve_db: Path) -> dict[str, list[Part]]:
    """The part files the current snapshot reads, per table ({} for none, or an older snapshot
    layout: then every large table is written again)."""
    if not serve_db.exists():
        return {}
    try:
        with duckdb.connect(str(serve_db), read_only=True) as con:
            rows = con.execute(
                f"select table_name, path, row_count, generation from main.{PARTS_TABLE} "
                "order by rowid"
            ).fetchall()
    except duckdb.Error:
        return {}
    parts: dict[str, list[Part]] = {}
    for name, path, count, generation in rows:
        parts.setdefault(name, []).append(Part(path, count, generation))
    return parts


def _remove_unreferenced_parts(serve_db: Path, keep: set[str]) -> None:
    directory = parts_dir(serve_db)
    if directory.is_dir():
        for part in directory.glob("*.parquet"):
            if str(part) not in keep:
                part.unlink(missing_ok=True)


def _remove_orphans(serve_db: Path) -> None:
    """Temporary snapshots (and their WAL) of publishes that were killed: their pid is gone."""
    for leftover in serve_db.parent.glob(f"{serve_db.name}.tmp-*"):
        pid = leftover.name.removeprefix(f"{serve_db.name}.tmp-").split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            leftover.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def table_checksums(db_path: Path, schema: str = "marts") -> dict[str, tuple[int, str]]:
    """Order-independent (row count, content hash) per table (or part view of a snapshot):
    equal data gives equal sums."""
    with duckdb.connect(str(db_path), read_only=True) as con:
        return checksums_of(con, schema)


def checksums_of(
    con: duckdb.DuckDBPyConnection, schema: str = "marts", *, at_version: int | None = None
) -> dict[str, tuple[int, str]]:
    """table_checksums over an open connection, of its default catalog (a lake's too); on a
    lake, `at_version` reads each table as it was at that snapshot (DuckLake time travel) and
    leaves out the tables it did not hold."""
    sums: dict[str, tuple[int, str]] = {}
    tables = [
        t
        for (t,) in con.execute(
            "select table_name from information_schema.tables where table_schema = ? "
            "and table_catalog = current_database() order by 1",
            [schema],
        ).fetchall()
    ]
    at = "" if at_version is None else f" at (version => {int(at_version)})"
    for table in tables:
        try:
            count, digest = con.execute(
                f'select count(*), coalesce(sum(hash(t)), 0)::varchar from {schema}."{table}" '
                f"as t{at}"
            ).fetchone()
        except duckdb.CatalogException:
            if at_version is None:
                raise
            continue  # not a table at that snapshot yet
        sums[table] = (count, digest)
    return sums
