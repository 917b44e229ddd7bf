"""dlt pipeline: new log lines -> `raw.events` (+ `raw.quarantined_events`).

Fast path (stack-notes §2): lines are checked and unpacked by DuckDB into Arrow tables that dlt
loads without its Python normaliser. Incremental by (segment, byte offset) kept in dlt resource
state, which dlt commits together with the load; `insert-only` merge on `event_id` makes a full
re-ingest add nothing. What it holds at once is bounded by bytes (ingest/budget.py).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import socket
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.budget import WINDOW_ROWS, IngestBudget, RowWindow
from ingest.checks import loadable_sql, quarantine_sql
from ingest.copies import dedupe_events, settle_staged_copies
from ingest.recovery import Recovery, ingest_lock, recover
from warehouse.canonical import sha256_hex
from warehouse.events import parse_payload
from warehouse.lake import (
    LAKE_ALIAS,
    LakeError,
    LakeTarget,
    create_lake,
    ensure_extensions,
    lake_target,
    open_warehouse,
    s3_settings,
)
from warehouse.log import EventLog
from warehouse.publish import create_database
from warehouse.upcasters import UpcastError, upcast

PIPELINE_NAME = "bench_events"
DATASET_NAME = "raw"
CHUNK_BYTES = 64 * 1024 * 1024  # the most read at once; a smaller memory limit reads less
# A quarantined line is kept up to this many characters; the log holds it whole.
QUARANTINED_LINE_CHARS = 64 * 1024

INSERT_ONLY = {"disposition": "merge", "strategy": "insert-only"}
EVENT_COLUMNS = {
    "producer": {"data_type": "json"},
    "payload": {"data_type": "json"},
}

_DLT_ENV = {
    "RUNTIME__DLTHUB_TELEMETRY": "false",
    "LOAD__DELETE_COMPLETED_JOBS": "true",
    "NORMALIZE__PARQUET_NORMALIZER__ADD_DLT_LOAD_ID": "true",
    # dlt warns that Arrow hints differ from its own on every load: expected, not actionable.
    "RUNTIME__LOG_LEVEL": "ERROR",
    # Events must be extracted before the quarantine resource reads what they set aside.
    "EXTRACT__NEXT_ITEM_MODE": "fifo",
    # The parquet files live only until DuckDB has read them once: compressing them costs more
    # (writing in extract, reading in load) than the bytes it saves.
    "DATA_WRITER__COMPRESSION": "none",
    # Write every table as it comes, as its own row group: each is one byte-bounded chunk.
    # dlt's default buffers 5000 rows and writes them as one row group, which for 120 events
    # of 11 MB is 1.3 GB held in extract and read back whole by the loader.
    "DATA_WRITER__BUFFER_MAX_ITEMS": "1",
}
# Settings of dlt's DuckDB connections. The rows of a load need not keep their order (they carry
# segment and line_no), which lets DuckDB insert them in parallel. The memory limit makes DuckDB
# flush and spill sooner: without it a 1M-event load peaks near 2 GB, with it near 1.2 GB, at
# the same speed. The limit is BENCH_INGEST_MEMORY_LIMIT (default 1GB, ingest/budget.py).
_DUCKDB_LOCAL_CONFIG = {"preserve_insertion_order": False}


@dataclass
class IngestResult:
    loaded_events: int = 0
    quarantined: int = 0
    segments_read: int = 0
    lines_read: int = 0
    upcasted: int = 0
    set_aside_rows: int = 0  # rows of segments that failed verification, removed
    duplicates_removed: int = 0  # rows an interrupted earlier load had inserted twice
    copies_replaced: int = 0  # loaded rows a copy that wins under ingest/copies.py's rule replaced
    compressed_segments: int = 0  # sealed segments stored compressed after this load (transform)
    oversized: int = 0  # of `quarantined`: events over the byte window (ingest/budget.py)
    quarantine_samples: list[dict[str, Any]] = field(default_factory=list)
    recovery: Recovery = field(default_factory=Recovery)  # what a killed ingest had left
    verification: Any = None  # the VerifyReport the caller checked the log with
    writers: list[Any] = field(default_factory=list)  # other writers' logs from the log bucket


# Lines are handed to DuckDB in record batches of at most this many rows, so its scan runs in
# parallel, and this many bytes (or one line): DuckDB parses a vector's lines at once, and a
# vector never spans two batches.
SCAN_BATCH_ROWS = 16_384
SCAN_BATCH_BYTES = 1024 * 1024


class _BatchChecker:
    """One in-memory DuckDB for the whole ingest: checks chunks of log lines in two passes.

    The first pass parses every line once and keeps those that pass every check at the current
    schema version; only the rest (bad lines, older versions: rare) get the second pass, which
    finds each one's exact reason.
    """

    def __init__(self) -> None:
        self.con = duckdb.connect()
        # Rows carry their line_no, so their order does not matter; this lets DuckDB run the
        # whole query, conversion to Arrow included, on every core.
        self.con.execute("set preserve_insertion_order = false")
        self.loadable_sql = f"""
            select {_EVENT_SELECT}, loadable from ({loadable_sql("batch")})
        """
        self.quarantine_sql = f"""
            select {_EVENT_SELECT}, current_version, error, line from ({quarantine_sql("rest")})
        """

    def close(self) -> None:
        self.con.close()

    def check(self, chunk: LineChunk) -> CheckedChunk:
        lines, quarantine, offsets = _line_array(chunk)
        long_lines = _LongLines(chunk, offsets, lines)
        lines = long_lines.skeletons_in(lines)
        line_no = pa.array(
            np.arange(chunk.first_line, chunk.first_line + chunk.line_count, dtype=np.int64)
        )
        batch = pa.table({"line_no": line_no, "line": lines})
        if quarantine:
            batch = batch.filter(lines.is_valid())
        self.con.register("batch", _byte_batches(batch, chunk.first_line, offsets))
        # The relation API converts to Arrow in parallel; a prepared statement with parameters
        # does not, so the segment name goes in as a quoted literal.
        segment = "'" + chunk.segment.replace("'", "''") + "'"
        checked = self.con.sql(self.loadable_sql.replace("$segment", segment)).to_arrow_table()
        self.con.unregister("batch")
        loadable = checked["loadable"]
        events = checked.filter(loadable).select(EVENTS_SCHEMA.names).cast(EVENTS_SCHEMA)
        if events.num_rows == batch.num_rows:
            return _checked(events, quarantine, 0, offsets, long_lines)

        rest = batch.filter(
            pc.is_in(batch["line_no"], checked.filter(pc.invert(loadable))["line_no"])
        )
        self.con.register("rest", rest)
        rows = (
            self.con.sql(self.quarantine_sql.replace("$segment", segment))
            .to_arrow_table()
            .to_pylist()
        )
        self.con.unregister("rest")
        old: list[tuple[str, int, str]] = []
        for row in rows:
            line = long_lines.original(row["line_no"]) or _strip_newline(row["line"])
            if row["error"]:
                quarantine.append(
                    _quarantine_row(row["segment"], row["line_no"], row["error"], line)
                )
            elif row["schema_version"] < row["current_version"]:
                old.append((row["segment"], row["line_no"], line))
            else:  # the first pass is stricter only through NULLs; load what passes here
                events = pa.concat_tables(
                    [events, pa.Table.from_pylist([row], schema=EVENTS_SCHEMA)]
                )
        upcasted_rows, upcast_quarantine = _upcast_rows(old)
        quarantine.extend(upcast_quarantine)
        if upcasted_rows:
            events = pa.concat_tables(
                [events, pa.Table.from_pylist(upcasted_rows, schema=EVENTS_SCHEMA)]
            )
        return _checked(events, quarantine, len(upcasted_rows), offsets, long_lines)


# Lines at least this long are checked by DuckDB on their skeleton: the line with every string
# longer than SKELETON_STRING_BYTES replaced by a short one. DuckDB's JSON parse of a long line
# holds 12 to 24 times its size (measured on 1-11 MB judge verdicts, DuckDB 1.5.6); a skeleton
# keeps every field and JSON type the checks look at, and the row's producer and payload are then
# taken from Python's parse of the whole line.
LONG_LINE_BYTES = 256 * 1024
SKELETON_STRING_BYTES = 256
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def _skeleton(raw: bytes) -> bytes:
    return _JSON_STRING.sub(
        lambda m: m.group() if len(m.group()) <= SKELETON_STRING_BYTES else b'"(long string)"', raw
    )


class _LongLines:
    """The long lines of one chunk: their skeletons for the check, their whole text for the
    rows that load or are quarantined."""

    def __init__(self, chunk: LineChunk, offsets: np.ndarray, lines: pa.Array) -> None:
        self.chunk, self.offsets = chunk, offsets
        sizes = np.diff(offsets)
        long = (sizes >= LONG_LINE_BYTES) & lines.is_valid().to_numpy(zero_copy_only=False)
        self.index = np.flatnonzero(long)
        self.line_nos = set((self.index + chunk.first_line).tolist())

    def _raw(self, line_no: int) -> bytes:
        at = line_no - self.chunk.first_line
        return self.chunk.data[int(self.offsets[at]) : int(self.offsets[at + 1])]

    def original(self, line_no: int) -> str | None:
        if line_no not in self.line_nos:
            return None
        return _strip_newline(self._raw(line_no).decode("utf-8"))

    def skeletons_in(self, lines: pa.Array) -> pa.Array:
        if not len(self.index):
            return lines
        mask = np.zeros(len(lines), dtype=bool)
        mask[self.index] = True
        skeletons = [
            _skeleton(self._raw(int(i) + self.chunk.first_line)).decode("utf-8") for i in self.index
        ]
        return pc.replace_with_mask(lines, pa.array(mask), pa.array(skeletons, lines.type))

    def whole_bodies_in(self, events: pa.Table, quarantine: list[dict[str, Any]]) -> pa.Table:
        """`events` with the producer and payload of each long line parsed from its whole text
        (a line whose whole text is not JSON after all goes to `quarantine`)."""
        if not self.line_nos:
            return events
        is_long = pc.is_in(events["line_no"], pa.array(sorted(self.line_nos), pa.int64()))
        if not pc.any(is_long).as_py():
            return events
        rows = []
        for row in events.filter(is_long).to_pylist():
            raw = self._raw(row["line_no"])
            try:
                event = json.loads(raw)
            except (ValueError, RecursionError) as exc:
                text = raw[:QUARANTINED_LINE_CHARS].decode("utf-8", "replace")
                quarantine.append(
                    _quarantine_row(
                        row["segment"], row["line_no"], f"not JSON: {type(exc).__name__}", text
                    )
                )
                continue
            for name in ("producer", "payload"):
                row[name] = json.dumps(event[name], ensure_ascii=False, separators=(",", ":"))
            rows.append(row)
        events = pa.concat_tables(
            [
                events.filter(pc.invert(is_long)),
                pa.Table.from_pylist(rows, schema=EVENTS_SCHEMA),
            ]
        )
        return events.take(pc.sort_indices(events["line_no"]))  # back in load order


def _byte_batches(batch: pa.Table, first_line: int, offsets: np.ndarray) -> pa.Table:
    """`batch` cut into record batches of at most SCAN_BATCH_ROWS rows and SCAN_BATCH_BYTES
    bytes, a longer line alone in its own."""
    index = batch["line_no"].to_numpy() - first_line
    ends = np.cumsum(offsets[index + 1] - offsets[index])
    if len(ends) == 0 or (ends[-1] <= SCAN_BATCH_BYTES and len(ends) <= SCAN_BATCH_ROWS):
        return batch
    pieces, start = [], 0
    while start < len(ends):
        before = ends[start - 1] if start else 0
        stop = int(np.searchsorted(ends, before + SCAN_BATCH_BYTES, side="right"))
        stop = min(max(stop, start + 1), start + SCAN_BATCH_ROWS)
        pieces.extend(batch.slice(start, stop - start).to_batches())
        start = stop
    return pa.Table.from_batches(pieces, batch.schema)


@dataclass(frozen=True)
class CheckedChunk:
    # Loadable events in line order, the order they are loaded in. The producer and payload of
    # a long line are its skeleton's until `long_lines.whole_bodies_in` (after the byte window,
    # so a line the window refuses is never parsed whole).
    events: pa.Table
    quarantine: list[dict[str, Any]]
    upcasted: int
    offsets: np.ndarray  # where each line of the chunk starts in its data, and the end
    long_lines: _LongLines


def _checked(
    events: pa.Table,
    quarantine: list[dict[str, Any]],
    upcasted: int,
    offsets: np.ndarray,
    long_lines: _LongLines,
) -> CheckedChunk:
    # DuckDB returns rows in any order; the byte window (budget.RowWindow) is over load order,
    # so the table is loaded in line order.
    events = events.take(pc.sort_indices(events["line_no"]))
    return CheckedChunk(events, quarantine, upcasted, offsets, long_lines)


def _strip_newline(line: str) -> str:
    return line[:-1] if line.endswith("\n") else line


def _line_array(chunk: LineChunk) -> tuple[pa.Array, list[dict[str, Any]], np.ndarray]:
    """The chunk's lines as an Arrow string array over the chunk's own bytes (no copy; each value
    keeps its newline, which JSON parsing ignores), quarantine rows for lines that are not
    UTF-8 (those become nulls), and the lines' offsets."""
    newlines = np.flatnonzero(np.frombuffer(chunk.data, dtype=np.uint8) == 0x0A)
    offsets = np.empty(len(newlines) + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:] = newlines + 1
    lines = pa.LargeStringArray.from_buffers(
        len(newlines), pa.py_buffer(offsets), pa.py_buffer(chunk.data)
    )
    try:
        lines.validate(full=True)  # checks UTF-8 in one vectorised pass
        return lines, [], offsets
    except pa.ArrowInvalid:
        pass
    quarantine: list[dict[str, Any]] = []
    decoded: list[str | None] = []
    for number, (start, end) in enumerate(itertools.pairwise(offsets.tolist()), chunk.first_line):
        raw = chunk.data[start : end - 1]
        try:
            decoded.append(raw.decode("utf-8") + "\n")
        except UnicodeDecodeError:
            decoded.append(None)
            quarantine.append(
                _quarantine_row(chunk.segment, number, "not UTF-8", raw.decode("utf-8", "replace"))
            )
    return pa.array(decoded, pa.large_string()), quarantine, offsets


_EVENT_SELECT = (
    "event_id, event_type, schema_version, schema_version as stored_schema_version, run_id, "
    "occurred_at, producer::varchar as producer, payload::varchar as payload, content_sha256, "
    "prev_sha256, $segment::varchar as segment, line_no"
)

EVENTS_SCHEMA = pa.schema(
    [
        ("event_id", pa.string()),
        ("event_type", pa.string()),
        ("schema_version", pa.int64()),
        ("stored_schema_version", pa.int64()),
        ("run_id", pa.string()),
        ("occurred_at", pa.string()),
        ("producer", pa.string()),
        ("payload", pa.string()),
        ("content_sha256", pa.string()),
        ("prev_sha256", pa.string()),
        ("segment", pa.string()),
        ("line_no", pa.int64()),
    ]
)


def _upcast_rows(
    old: list[tuple[str, int, str]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []
    quarantine: list[dict[str, Any]] = []
    for segment, line_no, line in old:
        row = {"segment": segment, "line_no": line_no, "line": line}
        try:
            event = json.loads(line)
        except (ValueError, RecursionError) as exc:  # nesting deeper than Python's stack
            quarantine.append(
                _quarantine_row(segment, line_no, f"not JSON: {type(exc).__name__}", line)
            )
            continue
        try:
            lifted = upcast(event)
            parse_payload(lifted["event_type"], lifted["payload"])
        except (UpcastError, ValueError) as exc:
            quarantine.append(
                _quarantine_row(row["segment"], row["line_no"], f"upcast: {exc}", row["line"])
            )
            continue
        rows.append(
            {
                "event_id": lifted["event_id"],
                "event_type": lifted["event_type"],
                "schema_version": lifted["schema_version"],
                "stored_schema_version": event["schema_version"],
                "run_id": lifted["run_id"],
                "occurred_at": lifted["occurred_at"],
                "producer": json.dumps(lifted["producer"], sort_keys=True),
                "payload": json.dumps(lifted["payload"], sort_keys=True, ensure_ascii=False),
                "content_sha256": lifted["content_sha256"],
                "prev_sha256": lifted["prev_sha256"],
                "segment": row["segment"],
                "line_no": row["line_no"],
            }
        )
    return rows, quarantine


def _quarantine_row(segment: str, line_no: int, error: str, line: str) -> dict[str, Any]:
    if len(line) > QUARANTINED_LINE_CHARS:
        line = (
            line[:QUARANTINED_LINE_CHARS]
            + f"... [{len(line):,} characters in all: the log keeps the line whole]"
        )
    return {
        "quarantine_id": sha256_hex(f"{segment}\x1f{line_no}"),
        "segment": segment,
        "line_no": line_no,
        "error": error,
        "raw_line": line,
    }


@dataclass(frozen=True)
class LineChunk:
    segment: str
    first_line: int
    data: bytes  # whole lines, each ending in a newline
    line_count: int
    next_offset: int  # where the next read of this segment starts


def _chunks(
    log: EventLog, segment: Path, offset: int, first_line: int, chunk_bytes: int
) -> Iterator[LineChunk]:
    """Complete lines after `offset`, about `chunk_bytes` at a time (more when one line is
    longer); a torn tail is never read."""
    with log.open_segment(segment) as handle:
        handle.seek(offset)
        carry = b""
        while block := handle.read(chunk_bytes):
            data = carry + block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            lines = data[:cut]
            count = lines.count(b"\n")
            offset += cut
            yield LineChunk(segment.name, first_line, lines, count, offset)
            first_line += count
            carry = data[cut:]


def _checked_chunks(
    logs: Sequence[EventLog], state: dict[str, Any], skip: frozenset[str], chunk_bytes: int
) -> Iterator[tuple[LineChunk, CheckedChunk]]:
    """New chunks of every segment of every log, in log order, with their check results.
    Segment names are unique across logs (a writer's name holds its start time, pid and a
    random part), so one state holds every log's positions. The next chunk is checked in a
    worker thread (DuckDB and pyarrow release the GIL) while dlt writes the current one, so
    the two overlap on a multi-core machine."""

    def new_chunks() -> Iterator[LineChunk]:
        for log in logs:
            seals = log.manifest()
            for segment in log.segments():
                if segment.name in skip:
                    continue  # failed verification: set aside whole, never loaded
                position = state.get(segment.name, {"offset": 0, "line": 1})
                sealed_size = seals.get(segment.name, {}).get("bytes")
                if (
                    position["offset"]
                    and sealed_size is not None
                    and position["offset"] >= sealed_size
                ):
                    continue  # loaded to its sealed end: not even opened (nor decompressed)
                yield from _chunks(log, segment, position["offset"], position["line"], chunk_bytes)

    checker = _BatchChecker()
    try:
        with ThreadPoolExecutor(max_workers=1) as worker:
            pending: deque[tuple[LineChunk, Future]] = deque()
            for chunk in new_chunks():
                pending.append((chunk, worker.submit(checker.check, chunk)))
                if len(pending) > 1:
                    done, checked = pending.popleft()
                    yield done, checked.result()
            while pending:
                done, checked = pending.popleft()
                yield done, checked.result()
    finally:
        checker.close()  # its memory is not needed while dlt loads
        pa.default_memory_pool().release_unused()  # nor the chunks' (mimalloc keeps them)


def events_source(
    logs: Sequence[EventLog],
    result: IngestResult,
    full: bool = False,
    skip: frozenset[str] = frozenset(),
    budget: IngestBudget | None = None,
):
    """Two resources read in order (fifo): events first, then the lines they quarantined."""
    import dlt

    budget = budget or IngestBudget.from_env()
    chunk_bytes = min(CHUNK_BYTES, budget.chunk_bytes)

    quarantined: list[dict[str, Any]] = []

    @dlt.resource(
        name="events",
        table_name="events",
        primary_key="event_id",
        write_disposition=INSERT_ONLY,
        columns=EVENT_COLUMNS,
    )
    def events() -> Iterator[Any]:
        resource_state = dlt.current.resource_state()
        state = resource_state.setdefault("segments", {})
        if full:
            state.clear()
            resource_state.pop("window", None)
        window = RowWindow(budget.window_bytes, resource_state.get("window"))
        segments_read: set[str] = set()
        for chunk, checked in _checked_chunks(logs, state, skip, chunk_bytes):
            segments_read.add(chunk.segment)
            table, oversized = _loadable(chunk, checked, window, budget)
            result.lines_read += chunk.line_count
            result.loaded_events += table.num_rows
            result.upcasted += checked.upcasted
            result.oversized += oversized
            quarantined.extend(checked.quarantine)
            if table.num_rows:
                yield table
            state[chunk.segment] = {
                "offset": chunk.next_offset,
                "line": chunk.first_line + chunk.line_count,
            }
            resource_state["window"] = window.state()
        result.segments_read = len(segments_read)

    @dlt.resource(
        name="quarantined_events",
        table_name="quarantined_events",
        primary_key="quarantine_id",
        write_disposition=INSERT_ONLY,
    )
    def quarantined_events() -> Iterator[Any]:
        result.quarantined = len(quarantined)
        result.quarantine_samples = quarantined[:20]
        if quarantined:
            yield quarantined

    return [events(), quarantined_events()]


def _within_window(
    chunk: LineChunk, checked: CheckedChunk, window: RowWindow, budget: IngestBudget
) -> tuple[pa.Table, int]:
    """The chunk's events that fit the byte window, and how many did not: each of those is
    added to the chunk's quarantine, whole, with its size and the window's."""
    table = checked.events
    index = table["line_no"].to_numpy() - chunk.first_line
    sizes = checked.offsets[index + 1] - checked.offsets[index]
    admitted, refused = window.admit(sizes)
    if not refused:
        return table, 0
    for row, window_total in refused.items():
        start, end = int(checked.offsets[index[row]]), int(checked.offsets[index[row] + 1])
        line = chunk.data[start : start + QUARANTINED_LINE_CHARS].decode("utf-8", "replace")
        checked.quarantine.append(
            _quarantine_row(
                chunk.segment,
                int(chunk.first_line + index[row]),
                f"oversized: {end - start:,} bytes would make the last {WINDOW_ROWS} events "
                f"loaded hold {window_total:,} bytes, over {budget.describe()}; not loaded, "
                "the log keeps it whole",
                line + f"... [{end - start:,} bytes in all: the log keeps the line whole]",
            )
        )
    return table.filter(pa.array(admitted)), len(refused)


def _loadable(chunk: LineChunk, checked: CheckedChunk, window: RowWindow, budget: IngestBudget):
    """What of the chunk loads: the events within the byte window, each long line's body
    parsed whole; and how many the window refused."""
    table, oversized = _within_window(chunk, checked, window, budget)
    return checked.long_lines.whole_bodies_in(table, checked.quarantine), oversized


def make_pipeline(warehouse_db: Path, pipelines_dir: Path, budget: IngestBudget | None = None):
    for key, value in _DLT_ENV.items():
        os.environ.setdefault(key, value)
    # Not a default: the staged rows must outlive the load until ingest/copies.py has compared
    # them with what was already loaded (a copy the insert-only merge skipped may win), and
    # cleared them; dlt truncating them first would silently keep the first-loaded copy.
    os.environ["LOAD__TRUNCATE_STAGING_DATASET"] = "false"
    import dlt
    from dlt.destinations.impl.duckdb.configuration import DuckDbCredentials

    budget = budget or IngestBudget.from_env()
    lake = lake_target()
    pipeline_name = PIPELINE_NAME
    if lake is not None:
        destination = _lake_destination(lake, loader := loader_id(pipelines_dir), budget)
        # Several data roots (machines) load into one lake: each its own dlt pipeline, whose
        # state (the log positions it has read) the lake keeps per pipeline name, so a loader
        # never resumes from another's positions.
        pipeline_name = f"{PIPELINE_NAME}_{loader}"
    else:
        credentials = DuckDbCredentials(
            str(warehouse_db),
            global_config={"memory_limit": budget.duckdb_memory_limit},
            local_config=_DUCKDB_LOCAL_CONFIG,
        )
        destination = dlt.destinations.duckdb(credentials)
    return dlt.pipeline(
        pipeline_name=pipeline_name,
        destination=destination,
        dataset_name=DATASET_NAME,
        pipelines_dir=str(pipelines_dir),
    )


def loader_id(pipelines_dir: Path) -> str:
    """Who loads: this machine and data root, as a short stable name."""
    where = f"{socket.gethostname()}:{Path(pipelines_dir).resolve()}"
    return sha256_hex(where.encode())[:10]


def _lake_destination(lake: LakeTarget, loader: str, budget: IngestBudget):
    """dlt's own DuckLake destination, attaching the lake under the name every reader uses
    (warehouse.lake.LAKE_ALIAS), its extensions installed from the wheels, never downloaded,
    its DuckDB bounded by the ingest's memory budget as the local warehouse's is.

    Each loader stages its rows in a dataset of its own: two loads sharing dlt's one staging
    dataset can each truncate the other's staged rows and both report success with none of
    them loaded (measured in the issue #29 spike: 0 of 972 rows)."""
    import dlt
    from dlt.destinations.impl.ducklake.configuration import DuckLakeCredentials

    ensure_extensions()
    if lake.is_local:
        catalog = f"duckdb:///{lake.catalog}"
    else:  # dlt takes a SQL catalog as a URL: postgres:postgresql://user@host/db
        kind, _, dsn = lake.catalog.partition(":")
        if kind != "postgres" or "://" not in dsn:
            raise LakeError(
                f"BENCH_WAREHOUSE=ducklake:{lake.catalog}: ingest needs a local catalog file or "
                "a PostgreSQL catalog given as a URL, ducklake:postgres:postgresql://user@host/db"
            )
        catalog = dsn
    credentials = DuckLakeCredentials(
        ducklake_name=LAKE_ALIAS, catalog=catalog, storage=_lake_storage(lake)
    )
    # the settings DuckDbBaseCredentials applies to every connection dlt opens (its __init__
    # here does not take them)
    credentials.global_config = {"memory_limit": budget.duckdb_memory_limit}
    credentials.local_config = _DUCKDB_LOCAL_CONFIG
    return dlt.destinations.ducklake(
        credentials, staging_dataset_name_layout=staging_dataset(loader, dataset="%s")
    )


def staging_schema(pipelines_dir: Path) -> str:
    """Where this loader's dlt stages its rows: dlt's default locally, one of its own on a lake."""
    if lake_target() is None:
        return f"{DATASET_NAME}_staging"
    return staging_dataset(loader_id(pipelines_dir))


def staging_dataset(loader: str, dataset: str = DATASET_NAME) -> str:
    """Where one loader stages its rows on a lake (dlt's staging dataset, one per loader)."""
    return f"{dataset}_staging_{loader}"


def _lake_storage(lake: LakeTarget):
    """The lake's data folder, or its S3 prefix with the credentials every lake connection
    uses (warehouse.lake.s3_settings: the standard AWS variables)."""
    if not lake.in_s3:
        return lake.data_path
    from dlt.common.configuration.specs import AwsCredentials
    from dlt.common.storages.configuration import FilesystemConfiguration

    s3 = s3_settings()
    scheme = "https" if s3["s3_use_ssl"] == "true" else "http"
    credentials = AwsCredentials(
        aws_access_key_id=s3["s3_access_key_id"] or None,
        aws_secret_access_key=s3["s3_secret_access_key"] or None,
        aws_session_token=s3["s3_session_token"] or None,
        region_name=s3["s3_region"],
        endpoint_url=f"{scheme}://{s3['s3_endpoint']}",
        s3_url_style=s3["s3_url_style"],
    )
    return FilesystemConfiguration(bucket_url=lake.data_path, credentials=credentials)


def ingest_log(
    log: EventLog | Sequence[EventLog],
    warehouse_db: Path,
    pipelines_dir: Path,
    *,
    full: bool = False,
    skip_segments: frozenset[str] | set[str] = frozenset(),
    purge_segments: frozenset[str] | set[str] = frozenset(),
    budget: IngestBudget | None = None,
) -> IngestResult:
    """Load new log lines; `full=True` re-reads every line (a no-op for rows already loaded).

    Nothing of `skip_segments` is loaded; rows an earlier ingest loaded from `purge_segments`
    (segments that failed verification) are removed from `raw.events`, so the warehouse holds
    only what verifies. `budget` bounds memory (default: BENCH_INGEST_MEMORY_LIMIT)."""
    budget = budget or IngestBudget.from_env()
    logs = [log] if isinstance(log, EventLog) else list(log)
    skip = frozenset(skip_segments) | frozenset(purge_segments)
    with ingest_lock(Path(pipelines_dir)):
        if lake_target() is None:
            create_database(Path(warehouse_db))  # in the compact storage format dbt's files get
        else:
            # A lake nobody created with `bench init --lake` is created by its first load: here,
            # where a race with another machine doing the same is retried
            # (warehouse.lake.connect), not in dlt's.
            create_lake(lake_target(), [DATASET_NAME, staging_dataset(loader_id(pipelines_dir))])
        pipeline = make_pipeline(warehouse_db, pipelines_dir, budget)
        # Whatever a killed ingest left pending is discarded and its lines read again
        # (ingest/recovery.py). A load killed after dlt's staging copy committed but before the
        # job was marked done may have merged ids twice (insert-only merge does not dedupe
        # within staging): repair that before loading, and after (in case it was this load).
        recovery = recover(pipeline)
        staging = staging_schema(pipelines_dir)
        replaced = settle_staged_copies(warehouse_db, staging)  # a kill after a load, before this
        removed = dedupe_events(warehouse_db)
        for attempt in range(1, LAKE_CONFLICT_ATTEMPTS + 1):
            result = IngestResult(
                recovery=recovery, duplicates_removed=removed, copies_replaced=replaced
            )
            try:
                pipeline.run(
                    events_source(logs, result, full=full, skip=skip, budget=budget),
                    loader_file_format="parquet",
                )
                break
            except Exception as exc:
                if attempt == LAKE_CONFLICT_ATTEMPTS or not _lake_conflict(exc):
                    raise
                # Another loader changed the lake's schema first (e.g. both created raw.events):
                # dlt says a retry is safe; its package is discarded and its lines read again.
                recover(pipeline)
        result.copies_replaced += settle_staged_copies(warehouse_db, staging)
        result.duplicates_removed += dedupe_events(warehouse_db)
        if purge_segments:
            result.set_aside_rows = _remove_segments(warehouse_db, frozenset(purge_segments))
            if result.set_aside_rows:
                # An event that another segment carries too (logs written before each shard of
                # a split run stated the run's start and regime as its own events held them
                # under one id) may have been loaded from a segment just set aside, its other
                # copy skipped as already loaded: read every other segment again, which loads
                # exactly those (insert-only: nothing else is new). Rare (a segment failed
                # verification), so the cost of a full read is paid only then.
                pipeline.run(
                    events_source(logs, IngestResult(), full=True, skip=skip, budget=budget),
                    loader_file_format="parquet",
                )
                result.copies_replaced += settle_staged_copies(warehouse_db, staging)
                result.duplicates_removed += dedupe_events(warehouse_db)
    return result


# Loads of several machines into one lake: a schema change that loses a race is tried again.
LAKE_CONFLICT_ATTEMPTS = 3


def _lake_conflict(exc: BaseException) -> bool:
    """A DuckLake commit refused because another transaction changed the same thing first, or
    a new lake's catalog that another machine was creating at the same moment."""
    link: BaseException | None = exc
    while link is not None:
        text = str(link)
        if ("Transaction conflict" in text and "DuckLake" in text) or (
            "Failed to initialize DuckLake" in text
        ):
            return True
        link = link.__cause__ or link.__context__
    return False


def _remove_segments(warehouse_db: Path, segments: frozenset[str]) -> int:
    with open_warehouse(Path(warehouse_db)) as con:
        exists = con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = 'raw' and table_name = 'events'"
        ).fetchone()[0]
        if not exists:
            return 0
        names = sorted(segments)
        (removed,) = con.execute(
            "select count(*) from raw.events where list_contains(?, segment)", [names]
        ).fetchone()
        con.execute("delete from raw.events where list_contains(?, segment)", [names])
    return removed
