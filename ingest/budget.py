"""How much of a log ingest holds at once, all derived from one memory limit.

DuckDB works on vectors of 2048 rows and keeps every string of a vector in memory while it
copies, merges or checkpoints them. A vector of 120 judge verdicts that each carry an 11 MB
report is 1.3 GB: under a 1 GB limit the load fails, and once such rows are committed the table
can no longer be checkpointed at all (measured on DuckDB 1.5.6: the 92nd consecutive 11 MB row
makes every later checkpoint fail with "could not allocate block"). So ingest bounds what it
hands over by bytes, not by count:

- lines are read and checked in chunks of at most `chunk_bytes` (plus one line);
- every table dlt writes is one parquet row group of one chunk;
- no `WINDOW_ROWS` consecutive loaded events (log order) hold more than `window_bytes`; an event
  that would break that is quarantined whole, with its size and the window's in the reason.

The window is an eighth of the limit: the loader's parallel copies can join the tail of one
vector to the head of another (two windows), and a merge pins its source and target vectors.
"""

from __future__ import annotations

import os
import re
from collections import deque
from dataclasses import dataclass

import numpy as np

MEMORY_LIMIT_ENV = "BENCH_INGEST_MEMORY_LIMIT"
DEFAULT_MEMORY_LIMIT = "1GB"
# DuckDB's vector size: the rows a scan, copy, merge or checkpoint holds at once.
WINDOW_ROWS = 2048
# Chunks are never larger than this, whatever the limit (larger ones stop helping throughput).
MAX_CHUNK_BYTES = 64 * 1024 * 1024
MIN_CHUNK_BYTES = 1024 * 1024

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes in a DuckDB-style size ('1GB' = 10^9, '1GiB' = 2^30, '512MB', '1000000')."""
    match = _SIZE.match(text)
    unit = match.group(2).lower() if match else None
    if not match or unit not in _UNITS:
        raise ValueError(f"{MEMORY_LIMIT_ENV}={text!r}: expected a size such as 1GB, 512MB or 2GiB")
    return int(float(match.group(1)) * _UNITS[unit])


@dataclass(frozen=True)
class IngestBudget:
    memory_limit: int  # bytes: DuckDB's limit for the loader's connections

    @classmethod
    def from_env(cls) -> IngestBudget:
        return cls(parse_size(os.environ.get(MEMORY_LIMIT_ENV) or DEFAULT_MEMORY_LIMIT))

    @property
    def duckdb_memory_limit(self) -> str:
        return f"{self.memory_limit}B"

    @property
    def chunk_bytes(self) -> int:
        return max(MIN_CHUNK_BYTES, min(MAX_CHUNK_BYTES, self.memory_limit // 32))

    @property
    def window_bytes(self) -> int:
        return self.memory_limit // 8

    def describe(self) -> str:
        return (
            f"{self.window_bytes:,} bytes per {WINDOW_ROWS} consecutive events, an eighth of "
            f"ingest's {self.memory_limit:,}-byte memory limit ({MEMORY_LIMIT_ENV})"
        )


class RowWindow:
    """Byte sizes of the last `WINDOW_ROWS - 1` loaded events, carried from chunk to chunk and
    from one ingest to the next (in dlt's resource state, committed with the load)."""

    def __init__(self, limit: int, tail: list[int] | None = None) -> None:
        self.limit = limit
        self.tail = np.asarray((tail or [])[-(WINDOW_ROWS - 1) :], dtype=np.int64)

    def state(self) -> list[int]:
        return self.tail.tolist()

    def admit(self, sizes: np.ndarray) -> tuple[np.ndarray, dict[int, int]]:
        """Which of `sizes` (events in load order) load: a mask, and for each one refused the
        bytes the window would have held with it."""
        sizes = np.asarray(sizes, dtype=np.int64)
        both = np.concatenate([self.tail, sizes])
        sums = np.concatenate([[0], np.cumsum(both)])
        ends = np.arange(len(self.tail) + 1, len(both) + 1)
        windows = sums[ends] - sums[np.maximum(ends - WINDOW_ROWS, 0)]
        if len(sizes) == 0 or windows.max() <= self.limit:  # the usual case: every event fits
            self.tail = both[-(WINDOW_ROWS - 1) :]
            return np.ones(len(sizes), dtype=bool), {}
        admitted = np.zeros(len(sizes), dtype=bool)
        refused: dict[int, int] = {}
        window = deque(self.tail.tolist())
        total = int(self.tail.sum())
        for index, size in enumerate(sizes.tolist()):
            if total + size > self.limit:
                refused[index] = total + size
                continue
            admitted[index] = True
            window.append(size)
            total += size
            if len(window) > WINDOW_ROWS - 1:
                total -= window.popleft()
        self.tail = np.asarray(window, dtype=np.int64)
        return admitted, refused
