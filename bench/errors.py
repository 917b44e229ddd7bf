"""Errors of the machine, not of the user's input, said in one line instead of a traceback:
a full disk, a read-only data root, a DuckDB file another process holds (which dlt reports as
"check your internet connection"), a DuckDB file that cannot be read."""

from __future__ import annotations

import errno
import re

_DISK_ERRNOS = {
    errno.ENOSPC: "no space left on the device: free some space (or move BENCH_HOME), then run "
    "the same command again; the log is append-only and nothing half-written is loaded",
    errno.EDQUOT: "disk quota exceeded: free some space, then run the same command again",
    errno.EROFS: "the file system is read-only: point BENCH_HOME at a writable directory",
    errno.EACCES: "permission denied: the data root must be writable by this user",
    errno.EPERM: "operation not permitted: the data root must be writable by this user",
}
_LOCK = re.compile(r'Could not set lock on file "([^"]+)"[^(]*(\(PID \d+\))?', re.IGNORECASE)


def _chain(exc: BaseException):
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def explain(exc: BaseException) -> str | None:
    """One line for an environment error anywhere in `exc`'s chain; None if it is not one."""
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
    for link in _chain(exc):
        if type(link).__module__.startswith("duckdb") and "IO Error" in str(link):
            return (
                f"DuckDB could not read or write a file: {str(link).strip()[:300]} "
                "(a corrupt warehouse.duckdb is replaced by `bench rebuild`)"
            )
    return None
