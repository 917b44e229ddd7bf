"""The append-only event log: JSONL segments, fsync'd, hash-chained, sealed in a manifest.

Layout under `log_dir`:
  <created-utc>-<pid>-<rand>.jsonl   one segment per writer; a writer never reopens a segment
  MANIFEST.jsonl                     one seal record per closed segment (lines, bytes, last hash)
  torn/                              bytes of torn final lines set aside by `recover()`, + reports

Chain: each line's `prev_sha256` is the sha256 of the previous line's bytes (without the
newline); the first line of a segment links to `genesis_sha256(segment_name)`, so a line moved
between segments also breaks the chain.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from warehouse.canonical import canonical_json, sha256_hex
from warehouse.events import Envelope
from warehouse.upcasters import upcast

SEGMENT_SUFFIX = ".jsonl"
MANIFEST_NAME = "MANIFEST.jsonl"
TORN_DIR = "torn"
DEFAULT_MAX_SEGMENT_BYTES = 256 * 1024 * 1024


def genesis_sha256(segment_name: str) -> str:
    return sha256_hex(f"genesis\x1f{segment_name}")


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class RawLine:
    segment: str
    line_no: int  # 1-based
    offset: int  # byte offset of the line start
    data: bytes  # without the trailing newline


@dataclass(frozen=True)
class TornTail:
    segment: str
    offset: int
    size: int
    saved_to: Path


class EventLog:
    def __init__(self, log_dir: Path):
        self.log_dir = Path(log_dir)

    # --- reading --------------------------------------------------------------------------

    def segments(self) -> list[Path]:
        if not self.log_dir.exists():
            return []
        return sorted(
            p
            for p in self.log_dir.iterdir()
            if p.suffix == SEGMENT_SUFFIX and p.name != MANIFEST_NAME
        )

    def manifest(self) -> dict[str, dict[str, Any]]:
        path = self.log_dir / MANIFEST_NAME
        if not path.exists():
            return {}
        seals: dict[str, dict[str, Any]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                seals[record["segment"]] = record
        return seals

    def iter_raw(
        self, segment: Path, start_offset: int = 0, start_line: int = 1
    ) -> Iterator[RawLine]:
        """Complete lines only: bytes after the last newline are a torn write, never yielded."""
        with open(segment, "rb") as handle:
            handle.seek(start_offset)
            data = handle.read()
        offset, line_no, name = start_offset, start_line, segment.name
        position = 0
        while True:
            end = data.find(b"\n", position)
            if end < 0:
                return
            yield RawLine(name, line_no, offset + position, data[position:end])
            position = end + 1
            line_no += 1

    def read(self, *, upcasted: bool = True) -> Iterator[tuple[RawLine, dict[str, Any]]]:
        for segment in self.segments():
            for raw in self.iter_raw(segment):
                event = json.loads(raw.data)
                yield raw, (upcast(event) if upcasted else event)

    def known_event_ids(self) -> set[str]:
        marker = b'"event_id":"'
        ids: set[str] = set()
        for segment in self.segments():
            for raw in self.iter_raw(segment):
                start = raw.data.find(marker)
                if start >= 0:
                    start += len(marker)
                    ids.add(raw.data[start : start + 36].decode("ascii", "replace"))
        return ids

    def torn_tail(self, segment: Path) -> tuple[int, int] | None:
        """(offset, size) of bytes after the last newline, if any."""
        size = segment.stat().st_size
        if size == 0:
            return None
        with open(segment, "rb") as handle:
            block = 1 << 16
            position = size
            while position > 0:
                start = max(0, position - block)
                handle.seek(start)
                chunk = handle.read(position - start)
                index = chunk.rfind(b"\n")
                if index >= 0:
                    cut = start + index + 1
                    return None if cut == size else (cut, size - cut)
                position = start
        return (0, size)

    # --- writing --------------------------------------------------------------------------

    def writer(
        self, *, dedupe: bool = True, max_segment_bytes: int = DEFAULT_MAX_SEGMENT_BYTES
    ) -> LogWriter:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.recover()
        return LogWriter(self, dedupe=dedupe, max_segment_bytes=max_segment_bytes)

    def recover(self) -> list[TornTail]:
        """Seal segments left open by a crashed writer, setting any torn final line aside.

        A segment whose writer is still alive holds an exclusive lock and is left alone."""
        seals = self.manifest()
        torn: list[TornTail] = []
        for segment in self.segments():
            if segment.name in seals:
                continue
            with open(segment, "r+b") as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live writer owns it
                tail = self.torn_tail(segment)
                if tail is not None:
                    torn.append(self._set_aside(segment, handle, *tail))
                self._seal(segment)
        return torn

    def _set_aside(self, segment: Path, handle, offset: int, size: int) -> TornTail:
        torn_dir = self.log_dir / TORN_DIR
        torn_dir.mkdir(exist_ok=True)
        handle.seek(offset)
        tail = handle.read(size)
        saved = torn_dir / f"{segment.name}.{offset}.partial"
        saved.write_bytes(tail)
        report = {
            "segment": segment.name,
            "offset": offset,
            "bytes": size,
            "tail_sha256": sha256_hex(tail),
            "reason": "final line has no newline: the writer stopped mid-write; never loaded",
            "detected_at": datetime.now(UTC).isoformat(),
        }
        saved.with_suffix(".report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
        _fsync_dir(torn_dir)
        handle.truncate(offset)
        handle.flush()
        os.fsync(handle.fileno())
        return TornTail(segment.name, offset, size, saved)

    def _seal(self, segment: Path) -> None:
        lines, last = 0, genesis_sha256(segment.name)
        for raw in self.iter_raw(segment):
            lines += 1
            last = sha256_hex(raw.data)
        self._append_seal(segment.name, lines, segment.stat().st_size, last)

    def _append_seal(self, name: str, lines: int, size: int, last_line_sha256: str) -> None:
        record = {
            "segment": name,
            "lines": lines,
            "bytes": size,
            "last_line_sha256": last_line_sha256,
        }
        with open(self.log_dir / MANIFEST_NAME, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


class LogWriter:
    """Appends events to a fresh segment of its own; use as a context manager."""

    def __init__(self, log: EventLog, *, dedupe: bool, max_segment_bytes: int):
        self.log = log
        self.max_segment_bytes = max_segment_bytes
        self._known = log.known_event_ids() if dedupe else None
        self._handle = None
        self._segment: Path | None = None
        self.appended = 0
        self.skipped_duplicates = 0

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open_segment(self) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        name = f"{stamp}-{os.getpid()}-{secrets.token_hex(2)}{SEGMENT_SUFFIX}"
        self._segment = self.log.log_dir / name
        self._handle = open(self._segment, "xb")  # noqa: SIM115 - lives as long as the writer
        fcntl.flock(self._handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _fsync_dir(self.log.log_dir)
        self._prev = genesis_sha256(name)
        self._lines = 0
        self._bytes = 0

    def append(self, events: Iterable[Envelope | dict[str, Any]]) -> int:
        """Write events, then flush and fsync once. Returns how many were new."""
        written = 0
        for event in events:
            body = event.model_dump() if isinstance(event, Envelope) else dict(event)
            if self._known is not None:
                if body["event_id"] in self._known:
                    self.skipped_duplicates += 1
                    continue
                self._known.add(body["event_id"])
            if self._handle is None:
                self._open_segment()
            body["prev_sha256"] = self._prev
            line = canonical_json(body).encode("utf-8")
            self._handle.write(line + b"\n")
            self._prev = sha256_hex(line)
            self._lines += 1
            self._bytes += len(line) + 1
            written += 1
            if self._bytes >= self.max_segment_bytes:
                self._sync()
                self._close_segment()
        self._sync()
        self.appended += written
        return written

    def _sync(self) -> None:
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def _close_segment(self) -> None:
        if self._handle is None:
            return
        self._sync()
        self.log._append_seal(self._segment.name, self._lines, self._bytes, self._prev)
        self._handle.close()  # releases the lock
        self._handle = None

    def close(self) -> None:
        self._close_segment()
