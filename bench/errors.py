"""Errors of the machine, not of the user's input, said in one line instead of a traceback:
a full disk, a read-only data root, a DuckDB file another process holds (which dlt reports as
"check your internet connection"), a corrupt DuckDB file (named, with the command that
replaces it), a DuckDB file that cannot be read."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from warehouse.paths import BenchPaths

if TYPE_CHECKING:  # duckdb is imported by what reads a file, not at every start of the CLI
    import duckdb

_DISK_ERRNOS = {
    errno.ENOSPC: "no space left on the device: free some space (or move BENCH_HOME), then run "
    "the same command again; the log is append-only and nothing half-written is loaded",
    errno.EDQUOT: "disk quota exceeded: free some space, then run the same command again",
    errno.EROFS: "the file system is read-only: point BENCH_HOME at a writable directory",
    errno.EACCES: "permission denied: the data root must be writable by this user",
    errno.EPERM: "operation not permitted: the data root must be writable by this user",
}
_LOCK = re.compile(r'Could not set lock on file "([^"]+)"[^(]*(\(PID \d+\))?', re.IGNORECASE)
# What DuckDB (1.x) says when a database file's bytes are damaged: overwritten, truncated, or a
# block whose checksum fails (that one does not name the file).
_CORRUPT = re.compile(
    r'The file "(?P<named>[^"]+)" exists, but it is not a valid DuckDB database file'
    r'|Could not read enough bytes from file "(?P<short>[^"]+)"'
    r"|Corrupt database file"
)
_SERVE_DB = BenchPaths(Path()).serve_db.name  # every other DuckDB file is rebuilt from the log


def _chain(exc: BaseException):
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def explain(exc: BaseException, *, db_file: Path | None = None) -> str | None:
    """One line for an environment error anywhere in `exc`'s chain; None if it is not one.
    `db_file`: the DuckDB file the caller was reading, for messages that do not name theirs."""
    for link in _chain(exc):
        text = str(link)
        lock = _LOCK.search(text)
        if lock:
            holder = f" {lock.group(2)}" if lock.group(2) else ""
            return (
                f"{lock.group(1)} is in use by another process{holder}: DuckDB allows one writer "
                "per file. Wait for that bench command to finish (the app reads serve.duckdb, "
                "never this file), then run this one again."
            )
        if isinstance(link, OSError) and link.errno in _DISK_ERRNOS:
            where = link.filename or "the data root"
            return f"{where}: {_DISK_ERRNOS[link.errno]}"
        if "No space left on device" in text:
            return f"no space left on the device ({text.strip()[:200]})"
        if "Read-only file system" in text:
            return f"the data root is on a read-only file system ({text.strip()[:200]})"
    corrupt = corrupt_database(exc, db_file)
    if corrupt is not None:
        return corrupt
    for link in _chain(exc):
        # the classes live in the `_duckdb` extension module, re-exported by `duckdb`
        if type(link).__module__.lstrip("_").startswith("duckdb") and "IO Error" in str(link):
            return (
                f"DuckDB could not read or write a file: {str(link).strip()[:300]} "
                "(a corrupt warehouse.duckdb is replaced by `bench rebuild`)"
            )
    return None


class DataFileCorrupt(ValueError):
    """A damaged DuckDB file, already named with what replaces it: printed as it is (the CLI
    does not look for a corrupt file in its text again, which would lose the name)."""


def corrupt_database(exc: BaseException, db_file: Path | None = None) -> str | None:
    """The damaged file and what replaces it: serve.duckdb is a copy of the marts (`bench
    publish` writes a new one); warehouse.duckdb holds nothing the log does not (`bench
    rebuild`). None when no DuckDB corruption is in the chain."""
    for link in _chain(exc):
        text = str(link)
        found = _CORRUPT.search(text)
        if found is None:
            continue
        # DuckDB's own line: a DbtError carries it deep inside dbt's log output
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.end())
        detail = text[start : end if end >= 0 else len(text)].strip()[:300]
        path = found.group("named") or found.group("short") or db_file
        path = path or _duckdb_path_in_frames(link)
        if path is None:
            return (
                f"a DuckDB file in the data root is corrupt ({detail}); `bench rebuild` builds a "
                "fresh warehouse.duckdb from the event log and publishes a new serve.duckdb"
            )
        return damaged_file(path, detail)
    return None


def damaged_file(path: str | Path, detail: str) -> str:
    """A damaged DuckDB file named, with the command that replaces it."""
    if Path(path).name == _SERVE_DB:
        return (
            f"{path} is corrupt or truncated ({detail}); it is only a published copy of "
            "the marts: `bench publish` writes a new one from the warehouse"
        )
    return (
        f"{path} is corrupt or truncated ({detail}); the event log holds everything in it: "
        "`bench rebuild` builds a fresh one from the log (and publishes it)"
    )


# A DuckDB file starts with three 4 KiB headers (the main one and two alternating database
# headers), then its blocks.
_HEADER_BYTES = 3 * 4096


def truncation(con: duckdb.DuckDBPyConnection, db_file: Path) -> str | None:
    """The damaged-file message when `db_file` is shorter than the blocks its header lists, else
    None. DuckDB opens a file cut after its metadata and fails only when a query reaches a
    missing block, so a file cut short can look healthy to a query that reads little."""
    block_size, total_blocks = con.execute(
        "select block_size, total_blocks from pragma_database_size() "
        "where database_name = current_database()"
    ).fetchone()
    expected = _HEADER_BYTES + block_size * total_blocks
    actual = db_file.stat().st_size
    if actual >= expected:
        return None
    return damaged_file(db_file, f"{actual:,} of the {expected:,} bytes its header lists")


def _duckdb_path_in_frames(exc: BaseException) -> str | None:
    """The .duckdb path the failing code was working on, innermost frame first: DuckDB's
    checksum error does not name its file, but the function that opened it holds the path."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            path = os.fspath(value) if isinstance(value, str | os.PathLike) else None
            if isinstance(path, str) and path.endswith(".duckdb"):
                return path
    return None
