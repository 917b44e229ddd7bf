"""The warehouse on a DuckLake instead of the local `warehouse.duckdb` (issue #29, docs/team.md).

One setting moves it: `BENCH_WAREHOUSE=ducklake:<catalog>` with `BENCH_LAKE_DATA=<folder or
s3://bucket/prefix>`. The catalog is what DuckDB's ducklake extension attaches: a local file
(`ducklake:/srv/lake/catalog.ducklake`, one machine) or a PostgreSQL database
(`ducklake:postgres:postgresql://bench@db.internal/bench`, a team). Unset (or `duckdb`), the warehouse is the
data root's DuckDB file, as always.

The lake is attached under the name `warehouse` and made the default catalog, so every query
the project writes (`raw.events`, `marts.x`) reads the same on both.

DuckDB must not download anything at run time: its extensions come from the `lake` extra's
wheels (duckdb-extension-ducklake etc., built for exactly the pinned DuckDB) and are installed
from those files into DuckDB's own extension folder, where dbt-duckdb's and dlt's connections
find them too. Autoinstall stays off, so a missing extension is an error, never a download.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import re
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import quote

import duckdb

# What DuckDB's ATTACH names the lake: the default catalog of every lake connection.
LAKE_ALIAS = "warehouse"
# The extensions a lake needs, by the wheel package that carries each (extra `lake`).
EXTENSION_WHEELS = {
    "ducklake": "duckdb_extension_ducklake",
    "postgres_scanner": "duckdb_extension_postgres_scanner",
    "httpfs": "duckdb_extension_httpfs",
}
# Never fetch an extension from the network; load only what is installed.
OFFLINE_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": True}
# Attempts at attaching a lake whose catalog another machine is creating at the same moment.
INIT_ATTEMPTS = 5


class LakeError(RuntimeError):
    """A lake setting or installation that cannot work, said in the user's terms."""


@dataclass(frozen=True)
class LakeTarget:
    catalog: str  # what follows `ducklake:` in ATTACH: a file path or `postgres:<dsn>`
    data_path: str  # a folder, or an object-store URL

    @property
    def attach_path(self) -> str:
        return f"ducklake:{self.catalog}"

    @property
    def public_name(self) -> str:
        """The catalog without a password (a URL's `user:secret@`, a DSN's `password=`): what
        may be shown or published."""
        name = re.sub(r"(://[^:/@]+):[^@]*@", r"\1@", self.attach_path)
        return re.sub(r"password=\S*\s?", "", name).strip()

    @property
    def in_s3(self) -> bool:
        return self.data_path.startswith("s3://")

    @property
    def metadata_schema(self) -> str:
        """Where in its catalog database the lake's tables live: a SQL catalog holds lakes by
        schema (dlt names it as the lake, `warehouse`); a catalog file uses its `main`."""
        return "main" if self.is_local else LAKE_ALIAS

    @property
    def is_local(self) -> bool:
        """A catalog file on this machine (the single-machine lake)."""
        return _is_local(self.catalog)

    def attach_sql(self, *, read_only: bool = False, snapshot: int | None = None) -> str:
        """`snapshot`: the lake as it was at that snapshot id (read-only, DuckLake's own rule)."""
        options = [f"DATA_PATH {_sql_string(self.data_path)}"]
        if not self.is_local:
            options.append(f"METADATA_SCHEMA {_sql_string(self.metadata_schema)}")
        if snapshot is not None:
            options.append(f"SNAPSHOT_VERSION {int(snapshot)}")
        if read_only or snapshot is not None:
            options.append("READ_ONLY")
        return (
            f"ATTACH IF NOT EXISTS {_sql_string(self.attach_path)} AS {LAKE_ALIAS} "
            f"({', '.join(options)})"
        )


def s3_settings(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """DuckDB's S3 settings from the standard AWS variables (AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL): every connection to
    a lake whose data is in an S3 bucket sets them, dlt's and dbt's too. AWS_ENDPOINT_URL names
    an S3-compatible server (MinIO, moto); `http://` there turns TLS off."""
    env = os.environ if environ is None else environ
    endpoint = (env.get("AWS_ENDPOINT_URL") or "").strip()
    scheme, sep, host = endpoint.partition("://")
    return {
        "s3_access_key_id": env.get("AWS_ACCESS_KEY_ID", ""),
        "s3_secret_access_key": env.get("AWS_SECRET_ACCESS_KEY", ""),
        "s3_session_token": env.get("AWS_SESSION_TOKEN", ""),
        "s3_region": env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
        "s3_endpoint": (host if sep else endpoint).rstrip("/") or "s3.amazonaws.com",
        "s3_use_ssl": "false" if scheme == "http" else "true",
        # a custom server is addressed by path; AWS itself by virtual host
        "s3_url_style": "path" if endpoint else "vhost",
    }


def lake_target(environ: Mapping[str, str] | None = None) -> LakeTarget | None:
    """The lake BENCH_WAREHOUSE names, or None for the local DuckDB file (the default)."""
    env = os.environ if environ is None else environ
    setting = (env.get("BENCH_WAREHOUSE") or "").strip()
    if setting in ("", "duckdb"):
        return None
    scheme, sep, catalog = setting.partition(":")
    if scheme != "ducklake" or not sep or not catalog.strip():
        raise LakeError(
            f"BENCH_WAREHOUSE={setting!r}: expected `duckdb` (the default) or "
            "`ducklake:<catalog>`, e.g. ducklake:/srv/lake/catalog.ducklake or "
            "ducklake:postgres:postgresql://bench@db.internal/bench"
        )
    data_path = (env.get("BENCH_LAKE_DATA") or "").strip()
    if not data_path:
        raise LakeError(
            "BENCH_WAREHOUSE names a lake but BENCH_LAKE_DATA is not set: give the folder or "
            "s3:// prefix where the lake's Parquet files live"
        )
    catalog = catalog.strip()
    if _is_local(catalog):
        catalog = str(Path(catalog).expanduser().resolve())
    if "://" not in data_path:
        data_path = str(Path(data_path).expanduser().resolve()) + "/"
    return LakeTarget(catalog=catalog, data_path=data_path)


def _is_local(catalog: str) -> bool:
    return not any(catalog.startswith(f"{kind}:") for kind in ("postgres", "mysql", "sqlite", "md"))


@cache
def ensure_extensions() -> None:
    """Install the lake's extensions from their wheels where DuckDB looks for extensions, once
    per machine (a later call finds them installed and does nothing; in this process, a later
    call returns at once)."""
    con = duckdb.connect(config=OFFLINE_CONFIG)
    try:
        installed = {
            name
            for (name,) in con.execute(
                "select extension_name from duckdb_extensions() where installed"
            ).fetchall()
        }
        for extension, package in EXTENSION_WHEELS.items():
            if extension not in installed:
                con.execute(f"INSTALL {_sql_string(str(_wheel_extension_file(package)))}")
    finally:
        con.close()


def _wheel_extension_file(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise LakeError(
            f"the DuckLake extensions are not installed ({package} is missing): "
            "pip install 'bench-warehouse[lake]'"
        )
    folder = Path(spec.origin).parent / "extensions" / f"v{duckdb.__version__}"
    files = sorted(folder.glob("*.duckdb_extension"))
    if not files:
        built_for = sorted(p.name for p in folder.parent.glob("v*"))
        raise LakeError(
            f"{package} carries no extension for DuckDB {duckdb.__version__} (it has "
            f"{', '.join(built_for) or 'none'}): install the wheel built for this DuckDB, or the "
            "DuckDB the lock file pins"
        )
    return files[0]


def connect(
    target: LakeTarget, *, read_only: bool = False, snapshot: int | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the lake attached as `warehouse` and used by default; at
    `snapshot`, the lake as it was then."""
    ensure_extensions()
    for attempt in range(1, INIT_ATTEMPTS + 1):
        con = duckdb.connect(config=OFFLINE_CONFIG)
        try:
            if target.in_s3:
                for name, value in s3_settings().items():
                    con.execute(f"SET {name} = {_sql_string(value)}")
            con.execute(target.attach_sql(read_only=read_only, snapshot=snapshot))
            con.execute(f"USE {LAKE_ALIAS}")
            return con
        except duckdb.Error as exc:
            con.close()
            # The first ATTACH of a new lake creates its catalog: two machines doing so at
            # once race in the catalog database, and the loser is refused; by the next try
            # the lake exists.
            if attempt < INIT_ATTEMPTS and "Failed to initialize DuckLake" in str(exc):
                time.sleep(0.2 * attempt)
                continue
            raise LakeError(f"cannot attach the lake {target.public_name}: {exc}") from exc
        except Exception:
            con.close()
            raise
    raise AssertionError("unreachable")


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


# --- the warehouse, wherever it is ---------------------------------------------------------------


def open_warehouse(
    warehouse_db: Path, *, read_only: bool = False, snapshot: int | None = None
) -> duckdb.DuckDBPyConnection:
    """A connection to the warehouse: the data root's DuckDB file `warehouse_db` by default, the
    lake when BENCH_WAREHOUSE names one (queries read the same either way); `snapshot` pins a
    lake to one of its snapshots."""
    target = lake_target()
    if target is None:
        return duckdb.connect(str(warehouse_db), read_only=read_only)
    return connect(target, read_only=read_only, snapshot=snapshot)


# The schemas every loader writes: made by `bench init --lake`, so that loaders starting at once
# on a new lake never race to create them (each would otherwise create the catalog and `raw`).
LOADED_SCHEMAS = ("raw",)
# A Parquet row group is written from memory DuckDB cannot spill: bounded by bytes, not only by
# its 122,880 rows (of events up to the 32 MB cap), a load fits the ingest's memory limit. An
# option of the loaded schemas, kept in the catalog (DuckLake's `set_option`); DuckDB bounds row
# groups by bytes only without insertion order, which loads do without and dbt's builds keep.
LOADED_SCHEMA_OPTIONS = {"parquet_row_group_size_bytes": "32MB"}


@dataclass(frozen=True)
class LakeReady:
    created: bool  # False: the lake was there already
    snapshot_id: int  # its latest snapshot
    tables: int  # tables it holds


def create_lake(target: LakeTarget, schemas: Sequence[str] = LOADED_SCHEMAS) -> LakeReady:
    """Create the lake once, explicitly (`bench init --lake`): its catalog, its data location and
    the `schemas` loaders write into (a loader adds its own staging schema). Running it again
    changes nothing and says what is there. Two machines doing it at once: the one whose commit
    conflicts tries again."""
    for attempt in range(1, INIT_ATTEMPTS + 1):
        try:
            return _create_lake(target, schemas)
        except duckdb.Error as exc:
            if attempt < INIT_ATTEMPTS and "Transaction conflict" in str(exc):
                time.sleep(0.2 * attempt)
                continue
            raise LakeError(f"cannot create the lake {target.public_name}: {exc}") from exc
    raise AssertionError("unreachable")


def _create_lake(target: LakeTarget, loaded: Sequence[str]) -> LakeReady:
    with connect(target) as con:
        (tables,) = con.execute(
            "select count(*) from information_schema.tables where table_catalog = ?",
            [LAKE_ALIAS],
        ).fetchone()
        schemas = {
            name
            for (name,) in con.execute(
                "select schema_name from information_schema.schemata where catalog_name = ?",
                [LAKE_ALIAS],
            ).fetchall()
        }
        missing = [schema for schema in loaded if schema not in schemas]
        for schema in missing:
            con.execute(f"create schema if not exists {schema}")
        options = set(
            con.execute(
                f"select option_name, scope_entry from {LAKE_ALIAS}.options() "
                "where scope = 'SCHEMA'"
            ).fetchall()
        )
        for schema in loaded:
            for name, value in LOADED_SCHEMA_OPTIONS.items():
                if (name, schema) not in options:  # set once; a team's own value stays
                    con.execute(
                        f"call {LAKE_ALIAS}.set_option(?, ?, schema => ?)", [name, value, schema]
                    )
        (snapshot_id,) = con.execute(
            f"select max(snapshot_id) from {LAKE_ALIAS}.snapshots()"
        ).fetchone()
    return LakeReady(created=bool(missing) and tables == 0, snapshot_id=snapshot_id, tables=tables)


def warehouse_exists(warehouse_db: Path) -> bool:
    """Whether there is a warehouse to read: the file, or (on a lake) always, since attaching
    a lake creates it empty."""
    return lake_target() is not None or Path(warehouse_db).exists()


# Where a lake says what was published from it, for readers on any machine (`bench pull`).
PUBLISHED_TABLE = "bench_meta.published"


def record_published(target: LakeTarget, snapshot_id: int, metadata: dict[str, object]) -> None:
    """Tell every reader of the lake that snapshot `snapshot_id` is the published one, with the
    snapshot's metadata (no secret: the catalog's public name, scoring vars, log head)."""
    with connect(target) as con:
        con.execute("create schema if not exists bench_meta")
        con.execute(
            f"create table if not exists {PUBLISHED_TABLE} "
            "(snapshot_id bigint, published_at timestamptz, metadata json)"
        )
        previous = con.execute(
            f"select max(snapshot_id) from {PUBLISHED_TABLE} where snapshot_id < ?", [snapshot_id]
        ).fetchone()[0]
        con.execute(
            f"insert into {PUBLISHED_TABLE} values (?, now(), ?)",
            [snapshot_id, json.dumps(metadata, sort_keys=True)],
        )
        if previous is not None:
            _expire_before(con, previous)


def _expire_before(con: duckdb.DuckDBPyConnection, snapshot_id: int) -> None:
    """Drop the lake's snapshots older than `snapshot_id`, and the files only they used. A lake
    keeps every snapshot's files (time travel) until told: without this, every rebuild of a
    mart would add its bytes for good. Kept: the publish before this one, which a reader may be
    pulling right now, and everything after it."""
    row = con.execute(
        f"select snapshot_time from {LAKE_ALIAS}.snapshots() where snapshot_id = ?", [snapshot_id]
    ).fetchone()
    if row is None:  # already expired
        return
    older_than = _sql_string(row[0].isoformat())
    con.execute(f"CALL ducklake_expire_snapshots('{LAKE_ALIAS}', older_than => {older_than})")
    con.execute(f"CALL ducklake_cleanup_old_files('{LAKE_ALIAS}', cleanup_all => true)")


def last_published(target: LakeTarget) -> tuple[int, dict[str, object]] | None:
    """The snapshot id and metadata of the lake's last publish, or None before the first."""
    with connect(target, read_only=True) as con:
        exists = con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = 'bench_meta' and table_name = 'published'"
        ).fetchone()[0]
        if not exists:
            return None
        row = con.execute(
            f"select snapshot_id, metadata from {PUBLISHED_TABLE} "
            "order by published_at desc, snapshot_id desc limit 1"
        ).fetchone()
    return (int(row[0]), json.loads(row[1])) if row else None


def published_state(warehouse_db: Path) -> dict[str, object] | None:
    """What a snapshot records of the lake it was published from: the catalog (no password) and
    the lake's snapshot id at that moment, which `AT (VERSION => id)` reads again. None for the
    local file."""
    target = lake_target()
    if target is None:
        return None
    with connect(target, read_only=True) as con:
        (snapshot_id,) = con.execute(
            f"select max(snapshot_id) from {LAKE_ALIAS}.snapshots()"
        ).fetchone()
    return {"catalog": target.public_name, "snapshot_id": snapshot_id}


# --- one builder at a time -----------------------------------------------------------------------

BUILDER_LOCK_KEY = 20261207  # the PostgreSQL advisory lock every builder of a lake takes


def this_process() -> str:
    """Who holds the builder lock, in words a refused user can act on."""
    return f"bench pid {os.getpid()} on {socket.gethostname()}"


@contextmanager
def builder_lock(target: LakeTarget, holder: str | None = None) -> Iterator[None]:
    """Hold the lake's one builder lock while dbt writes it, or be refused naming who holds it.
    Many machines load and read a lake at once; only one may build it (two dbt runs replacing
    the same tables would interleave). A PostgreSQL catalog keeps the lock in its own database
    (an advisory lock, released when the session ends, a killed builder included); a catalog
    file, in a lock file beside it (flock, released by the kernel the same way)."""
    holder = holder or this_process()
    ensure_extensions()
    if target.is_local:
        with _file_lock(Path(target.catalog + ".build.lock"), holder, target):
            yield
    else:
        with _advisory_lock(target, holder):
            yield


@contextmanager
def _file_lock(path: Path, holder: str, target: LakeTarget) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            raise LakeError(_refusal(target, handle.read().strip() or "another process")) from None
        handle.seek(0)
        handle.truncate()
        handle.write(holder)
        handle.flush()
        try:
            yield
        finally:
            handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _advisory_lock(target: LakeTarget, holder: str) -> Iterator[None]:
    kind, _, dsn = target.catalog.partition(":")
    if kind != "postgres":
        raise LakeError(f"{target.public_name}: builds need a PostgreSQL catalog or a catalog file")
    # the session that takes the lock is named for its holder: what a refused builder reads
    named = _with_application_name(dsn, holder)
    con = duckdb.connect(config=OFFLINE_CONFIG)
    try:
        con.execute(f"ATTACH {_sql_string(named)} AS bench_lock (TYPE postgres)")
        (taken,) = con.execute(
            "select * from postgres_query('bench_lock', "
            f"'select pg_try_advisory_lock({BUILDER_LOCK_KEY})')"
        ).fetchone()
        if not taken:
            rows = con.execute(
                "select * from postgres_query('bench_lock', 'select a.application_name "
                "from pg_locks l join pg_stat_activity a on a.pid = l.pid "
                f"where l.locktype = ''advisory'' and l.objid = {BUILDER_LOCK_KEY} "
                "and l.granted')"
            ).fetchall()
            who = rows[0][0] if rows and rows[0][0] else "another process"
            raise LakeError(_refusal(target, who))
        yield
    finally:
        con.close()  # ends the session, and with it the lock


def _with_application_name(dsn: str, name: str) -> str:
    """A libpq connection string (URI or key=value) that names its session `name`."""
    if "://" in dsn:
        return f"{dsn}{'&' if '?' in dsn else '?'}application_name={quote(name)}"
    return f"{dsn} application_name='{name}'"


def _refusal(target: LakeTarget, holder: str) -> str:
    return (
        f"the lake {target.public_name} is being built by {holder}: one builder at a time. "
        "Wait for it to finish, then run this again (loads and reads may go on meanwhile)."
    )
