"""The append-only event log: JSONL segments, fsync'd, hash-chained, sealed in a manifest.

Layout under `log_dir`:
  <created-utc>-<pid>-<rand>.jsonl   one segment per writer; a writer never reopens a segment
  <...>.jsonl.zst                    the same segment once sealed and ingested, zstd-compressed
  MANIFEST.jsonl                     append-only records, each a leaf of the log's Merkle tree
                                     (merkle.py): `open` when a writer starts a segment, `seal`
                                     when it closes it (lines, bytes, last hash), `accept`
  signed-heads.log                   ed25519-signed heads, when a signing key is configured
  torn/                              bytes of torn final lines set aside by `recover()`, + reports
  locks/                             run-<run_id>.lock (one writer per run), manifest.lock

One writer per run: the first event a `LogWriter` appends for a run takes an exclusive `flock`
on that run's lock file and holds it until the writer closes (the OS drops it if the process
dies). A second writer on the same run waits `RUN_LOCK_WAIT_S`, then refuses, naming the
holder's pid; writers of different runs append concurrently. A runner takes the same lock
before it reads the log for what is done (`EventLog.run_lock`; the run kernel does), so no other
process can run a unit between its read and its last event; the writer's own check that the run
did not grow since it opened is the safety net for writers that read without the lock.

Compression: an intact `bench ingest` compresses every sealed segment it loaded (`compress_sealed`), about
9x on this project's events. The segment keeps its name, lines, chain and seal; `open_segment`
reads either form, so every reader, `bench verify` included, sees the same bytes. The compressed
file is written aside, fsynced and renamed before the plain one is removed: a kill at any point
leaves one whole copy, and a plain file beside its compressed copy is the one read.

Chain: each line's `prev_sha256` is the sha256 of the previous line's bytes (without the
newline); the first line of a segment links to `genesis_sha256(segment_name)`, so a line moved
between segments also breaks the chain.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import zstandard

from warehouse.canonical import canonical_json, canonical_sha256, file_sha256, sha256_hex
from warehouse.events import Envelope, hashed_content
from warehouse.merkle import LogHead, head_of, leaf_hash
from warehouse.scrub import Scrubber
from warehouse.upcasters import upcast

SEGMENT_SUFFIX = ".jsonl"
COMPRESSED_SUFFIX = ".zst"
ID_INDEX_SUFFIX = ".ids.zst"  # beside a compressed segment: its event and run ids
# zstd's default level: ~9x on this log at ~300 MB/s; higher levels buy a few % for several times
# the time, paid by every ingest that compresses.
COMPRESSION_LEVEL = 3
MANIFEST_NAME = "MANIFEST.jsonl"
TORN_DIR = "torn"
LOCKS_DIR = "locks"
DEFAULT_MAX_SEGMENT_BYTES = 256 * 1024 * 1024
# One event is one line; a line this long is a collector bug (an uncapped body), and would cost
# every later ingest and rebuild its size in memory several times over.
MAX_EVENT_BYTES = 32 * 1024 * 1024
# How long a second writer on a run waits for the first before refusing: long enough to bridge
# a writer that is just closing, short enough that a refused run says so at once.
RUN_LOCK_WAIT_S = 2.0  # BENCH_RUN_LOCK_WAIT_S overrides
_RUN_ID_MARKER = b'"run_id":"'
_EVENT_ID_MARKER = b'"event_id":"'


class ManifestCorrupt(ValueError):
    """A MANIFEST line that is not a record (not a torn final line: those are set aside)."""


@dataclass(frozen=True)
class ManifestRecord:
    line_no: int
    data: bytes  # the line's bytes, without the newline: what the Merkle leaf hashes
    record: dict[str, Any]

    @property
    def op(self) -> str:
        return self.record.get("op", "seal")  # records written before `op` existed are seals


class EventTooLarge(ValueError):
    pass


class SegmentUnreadable(ValueError):
    """A compressed segment that does not decompress: damaged or replaced on disk."""

    def __init__(self, segment: Path, reason: str):
        self.segment = segment
        super().__init__(
            f"{compressed_path(segment)}: the compressed segment does not decompress ({reason}); "
            "it was damaged or replaced. `bench verify` reports what the log still covers."
        )


class _Decompressed:
    """A compressed segment's bytes, read forward; a damaged frame is a SegmentUnreadable."""

    def __init__(self, segment: Path):
        self.segment = segment
        stored = open(compressed_path(segment), "rb")  # noqa: SIM115 - closed with the reader
        self._reader = zstandard.ZstdDecompressor().stream_reader(stored, closefd=True)

    def seek(self, offset: int) -> None:
        try:
            self._reader.seek(offset)
        except zstandard.ZstdError as exc:
            raise SegmentUnreadable(self.segment, str(exc)) from None

    def read(self, size: int = -1) -> bytes:
        try:
            return self._reader.read(size)
        except zstandard.ZstdError as exc:
            raise SegmentUnreadable(self.segment, str(exc)) from None

    def close(self) -> None:
        self._reader.close()


def _event_type(event: Envelope | dict[str, Any]) -> str:
    return event.event_type if isinstance(event, Envelope) else str(event.get("event_type"))


class RunLocked(RuntimeError):
    """Another live writer holds the run; printed to the user as one line."""

    def __init__(
        self, run_id: str, holder: str, *, advanced: bool = False, waited_s: float | None = None
    ):
        self.run_id, self.holder = run_id, holder
        if advanced:
            message = (
                f"run {run_id} was written by another process ({holder}) after this one "
                "read the log; nothing was appended. Run the same command again to resume "
                "from what is in the log."
            )
        else:
            waited = f" after waiting {waited_s:g} s for it" if waited_s is not None else ""
            message = (
                f"run {run_id} is being run by another process ({holder}); one process per "
                f"run, so this one stopped{waited} and did nothing. Let that one finish (or "
                "stop it), then run the same command again: it resumes from the log and "
                "repeats no finished unit (BENCH_RUN_LOCK_WAIT_S sets how long to wait)."
            )
        super().__init__(message)


def id_index_path(segment: Path) -> Path:
    """Where a compressed segment's id index is kept (`EventLog._write_id_index`)."""
    return segment.with_name(segment.name + ID_INDEX_SUFFIX)


def compressed_path(segment: Path) -> Path:
    """Where `segment` is stored once compressed."""
    return segment.with_name(segment.name + COMPRESSED_SUFFIX)


def genesis_sha256(segment_name: str) -> str:
    return sha256_hex(f"genesis\x1f{segment_name}")


def compress_segment(segment: Path, target: Path) -> None:
    """`segment`'s bytes zstd-compressed into `target`, fsynced. Deterministic for the same bytes
    (one level, one frame): the bucket's copy of a segment (log_bucket.py) is byte-identical to
    the one `compress_sealed` writes, so a `compress` record's sha256 vouches for both."""
    with open(segment, "rb") as source, open(target, "wb") as sink:
        compressor = zstandard.ZstdCompressor(level=COMPRESSION_LEVEL, write_checksum=True)
        # the size in the frame's header lets a whole read decompress in one call
        compressor.copy_stream(source, sink, size=segment.stat().st_size)
        sink.flush()
        os.fsync(sink.fileno())


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


def tail_of(data: bytes) -> tuple[int, int] | None:
    """(offset, size) of the bytes after the last newline of `data`, if any."""
    cut = data.rfind(b"\n") + 1
    return None if cut == len(data) else (cut, len(data) - cut)


def lines_in(
    segment_name: str, data: bytes, start_offset: int = 0, start_line: int = 1
) -> Iterator[RawLine]:
    """The complete lines of `data`, read from `start_offset` of the segment `segment_name`."""
    position, line_no = 0, start_line
    while True:
        end = data.find(b"\n", position)
        if end < 0:
            return
        yield RawLine(segment_name, line_no, start_offset + position, data[position:end])
        position = end + 1
        line_no += 1


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
        """Every segment by its name (`<...>.jsonl`), stored plain or compressed; read them with
        `open_segment`."""
        if not self.log_dir.exists():
            return []
        names: set[str] = set()
        for path in self.log_dir.iterdir():
            if path.suffix == SEGMENT_SUFFIX and path.name != MANIFEST_NAME:
                names.add(path.name)
            elif path.name.endswith(SEGMENT_SUFFIX + COMPRESSED_SUFFIX) and path.name[0] != ".":
                names.add(path.name.removesuffix(COMPRESSED_SUFFIX))
        return sorted(self.log_dir / name for name in names)

    @contextlib.contextmanager
    def open_segment(self, segment: Path) -> Iterator[BinaryIO | _Decompressed]:
        """The segment's bytes, from the plain file while there is one, else decompressed (the
        reader seeks forward by reading)."""
        try:
            handle = open(segment, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            handle = _Decompressed(segment)
        try:
            yield handle  # type: ignore[misc]
        finally:
            handle.close()

    def is_compressed(self, segment: Path) -> bool:
        return not segment.exists() and compressed_path(segment).exists()

    def compress_sealed(self) -> list[str]:
        """Compress every sealed segment still stored plain; returns their names. Called right
        after an intact verification and load (transform.pipeline.compress_verified): a
        `compress` MANIFEST record then vouches that the compressed file (its sha256) holds the
        bytes just verified, so a later fast verification can check that file's digest instead
        of every line (`compressions`). Written aside, fsynced and
        renamed, then recorded, then the plain file removed: a kill at any point leaves one whole
        copy, and the next call finishes the job."""
        records = self.manifest_records()
        seals = self.seals(records)
        recorded = self.compressions(records)
        done: list[str] = []
        for segment in self.segments():
            if segment.name not in seals or not segment.exists():
                continue
            target = compressed_path(segment)
            record = recorded.get(segment.name)
            if record is None:
                index = self._write_id_index(segment)
                self._compress(segment, target)
                with self._manifest_lock():
                    self._append_record(
                        {
                            "op": "compress",
                            "segment": segment.name,
                            "sha256": file_sha256(target),
                            "bytes": target.stat().st_size,
                            "ids_sha256": file_sha256(index),
                        }
                    )
            elif not target.exists() or file_sha256(target) != record["sha256"]:
                continue  # not the file the record vouches for: the plain one stays, verify reports
            segment.unlink()
            _fsync_dir(self.log_dir)
            done.append(segment.name)
        return done

    def _compress(self, segment: Path, target: Path) -> None:
        partial = self.log_dir / f".{target.name}.partial"
        compress_segment(segment, partial)
        os.replace(partial, target)
        _fsync_dir(self.log_dir)

    def _write_id_index(self, segment: Path) -> Path:
        """The event and run ids of a segment about to be compressed, beside it: a log writer
        reads them instead of decompressing the segment (`_IdScan`). The `compress` record
        holds the index's sha256, so an index that is not the one written here is not used."""
        ids, runs = _ids_in(segment.read_bytes())
        index = id_index_path(segment)
        partial = self.log_dir / f".{index.name}.partial"
        body = json.dumps({"event_ids": sorted(ids), "run_ids": sorted(runs)}).encode()
        partial.write_bytes(zstandard.ZstdCompressor(level=COMPRESSION_LEVEL).compress(body))
        with open(partial, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, index)
        return index

    def id_index(self, segment: Path, record: dict[str, Any] | None) -> tuple[set, set] | None:
        """(event ids, run ids) of a compressed segment from its index, when the `compress`
        record vouches for that index; None when there is none to trust (read the segment)."""
        index = id_index_path(segment)
        if record is None or "ids_sha256" not in record or not index.exists():
            return None
        stored = index.read_bytes()
        if sha256_hex(stored) != record["ids_sha256"]:
            return None
        try:
            body = json.loads(zstandard.ZstdDecompressor().decompress(stored))
        except (zstandard.ZstdError, ValueError):
            return None
        return set(body["event_ids"]), set(body["run_ids"])

    @staticmethod
    def compressions(records: list[ManifestRecord]) -> dict[str, dict[str, Any]]:
        """The `compress` record of each compressed segment: the first one (a later record for
        the same segment vouches for nothing; the head check catches an edited earlier one)."""
        first: dict[str, dict[str, Any]] = {}
        for r in records:
            if r.op == "compress":
                first.setdefault(r.record["segment"], r.record)
        return first

    @property
    def manifest_path(self) -> Path:
        return self.log_dir / MANIFEST_NAME

    def manifest_records(self) -> list[ManifestRecord]:
        """Every complete MANIFEST line (a torn final line is not a record yet)."""
        path = self.manifest_path
        if not path.exists():
            return []
        data = path.read_bytes()
        records: list[ManifestRecord] = []
        for number, line in enumerate(data[: data.rfind(b"\n") + 1].splitlines(), start=1):
            try:
                record = json.loads(line)
                if not isinstance(record, dict) or not isinstance(record.get("segment", ""), str):
                    raise ValueError("not a record object")
            except ValueError as exc:
                raise ManifestCorrupt(
                    f"{path}:{number}: not a MANIFEST record ({exc}); the MANIFEST was edited "
                    "or damaged — `bench verify` reports what it covers"
                ) from None
            records.append(ManifestRecord(number, line, record))
        return records

    def manifest(self) -> dict[str, dict[str, Any]]:
        """Seal record per sealed segment."""
        return self.seals(self.manifest_records())

    @staticmethod
    def seals(records: list[ManifestRecord]) -> dict[str, dict[str, Any]]:
        """The `seal` record of each sealed segment, from `records`."""
        return {r.record["segment"]: r.record for r in records if r.op == "seal"}

    def head(self, records: list[ManifestRecord] | None = None) -> LogHead:
        """Size and Merkle root of the MANIFEST as it is now."""
        records = self.manifest_records() if records is None else records
        events = sum(int(r.record.get("lines", 0)) for r in records if r.op == "seal")
        return head_of([leaf_hash(r.data) for r in records], events)

    def iter_raw(
        self, segment: Path, start_offset: int = 0, start_line: int = 1
    ) -> Iterator[RawLine]:
        """Complete lines only: bytes after the last newline are a torn write, never yielded."""
        if start_offset == 0:
            data = self.segment_bytes(segment)
        else:
            with self.open_segment(segment) as handle:
                handle.seek(start_offset)
                data = handle.read()
        return lines_in(segment.name, data, start_offset, start_line)

    def segment_bytes(self, segment: Path) -> bytes:
        """All of a segment's bytes (decompressed), for a reader that checks its tail too."""
        try:
            return segment.read_bytes()
        except FileNotFoundError:
            pass
        stored = compressed_path(segment).read_bytes()
        try:
            if zstandard.frame_content_size(stored) > 0:
                # the frame states its size (compress_sealed writes it): one call, no stream,
                # about twice as fast
                return zstandard.ZstdDecompressor().decompress(stored)
        except zstandard.ZstdError as exc:
            raise SegmentUnreadable(segment, str(exc)) from None
        with self.open_segment(segment) as handle:
            return handle.read()

    def read(self, *, upcasted: bool = True) -> Iterator[tuple[RawLine, dict[str, Any]]]:
        for segment in self.segments():
            for raw in self.iter_raw(segment):
                event = json.loads(raw.data)
                yield raw, (upcast(event) if upcasted else event)

    def known_event_ids(self) -> set[str]:
        return _IdScan(self).scan(set())[0]

    def torn_tail(self, segment: Path) -> tuple[int, int] | None:
        """(offset, size) of bytes after the last newline, if any."""
        if self.is_compressed(segment):
            return self._compressed_tail(segment)
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

    def _compressed_tail(self, segment: Path) -> tuple[int, int] | None:
        """A compressed segment was sealed whole, so a tail is bytes put there since."""
        return tail_of(self.segment_bytes(segment))

    # --- writing --------------------------------------------------------------------------

    def writer(
        self, *, dedupe: bool = True, max_segment_bytes: int = DEFAULT_MAX_SEGMENT_BYTES
    ) -> LogWriter:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.recover()
        return LogWriter(self, dedupe=dedupe, max_segment_bytes=max_segment_bytes)

    @property
    def locks_dir(self) -> Path:
        return self.log_dir / LOCKS_DIR

    def run_lock(self, run_id: str, *, wait_s: float | None = None) -> RunLock:
        """The exclusive lock of one run; `LogWriter` takes it by itself on the run's first
        event. A caller that must also hold it while planning (read state, then write) can
        enter it first: writers in the same process share it."""
        if wait_s is None:
            wait_s = float(os.environ.get("BENCH_RUN_LOCK_WAIT_S", RUN_LOCK_WAIT_S))
        return RunLock(self.locks_dir, run_id, wait_s)

    @contextlib.contextmanager
    def _manifest_lock(self) -> Iterator[None]:
        """Serialises seal writes and recovery across processes: a segment is sealed once."""
        self.locks_dir.mkdir(parents=True, exist_ok=True)
        with open(self.locks_dir / "manifest.lock", "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def recover(self) -> list[TornTail]:
        """Seal segments left open by a crashed writer, setting any torn final line aside.

        A segment whose writer is still alive holds an exclusive lock and is left alone; a
        segment no writer opened (no `open` record) is foreign and never sealed: verification
        reports it."""
        torn: list[TornTail] = []
        with self._manifest_lock():
            manifest_tail = self._recover_manifest()
            if manifest_tail is not None:
                torn.append(manifest_tail)
            records = self.manifest_records()  # under the lock: another recoverer may have sealed
            seals = self.seals(records)
            opened = {r.record["segment"] for r in records if r.op == "open"}
            for segment in self.segments():
                if segment.name in seals or segment.name not in opened:
                    continue
                try:
                    handle = open(segment, "r+b")  # noqa: SIM115 - closed below
                except FileNotFoundError:
                    continue
                with handle:
                    try:
                        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        continue  # a live writer owns it
                    tail = self.torn_tail(segment)
                    if tail is not None:
                        torn.append(self._set_aside(segment, handle, *tail))
                    self._seal(segment)
        return torn

    def _recover_manifest(self) -> TornTail | None:
        """A writer killed while appending a record leaves a torn final MANIFEST line."""
        path = self.manifest_path
        if not path.exists():
            return None
        tail = self.torn_tail(path)
        if tail is None:
            return None
        with open(path, "r+b") as handle:
            return self._set_aside(path, handle, *tail)

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

    def _append_seal(
        self, name: str, lines: int, size: int, last_line_sha256: str, *, scrubbed: int = 0
    ) -> None:
        """Callers hold `_manifest_lock`. `scrubbed`: how many secrets the writer replaced."""
        record = {
            "op": "seal",
            "segment": name,
            "lines": lines,
            "bytes": size,
            "last_line_sha256": last_line_sha256,
        }
        if scrubbed:
            record["scrubbed"] = scrubbed
        self._append_record(record)

    def _append_record(self, record: dict[str, Any]) -> None:
        """Callers hold `_manifest_lock`. Signs the new head when a signing key is set."""
        with open(self.manifest_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        from warehouse.signing import sign_head, signing_key_from_env

        key = signing_key_from_env(self.log_dir)
        if key is not None:
            sign_head(self.log_dir, key, self.head())

    def record_acceptance(self, problems: list[dict[str, Any]], reason: str) -> LogHead:
        """An explicit, recorded acceptance of verification problems (covered by the tree)."""
        if not reason.strip():
            raise ValueError("an acceptance needs a reason (who checked what, and why it is fine)")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with self._manifest_lock():
            self._append_record(
                {
                    "op": "accept",
                    "segment": "",
                    "problems": problems,
                    "reason": reason,
                    "accepted_at": datetime.now(UTC).isoformat(),
                    "pid": os.getpid(),
                }
            )
            return self.head()


def _line(event: Envelope | dict[str, Any], prev_sha256: str) -> str:
    """The canonical JSON of the envelope with its chain link set."""
    # (read from pydantic's private dict directly: its __getattr__ costs a third of an append)
    hashed = event.__pydantic_private__.get("_hashed_json") if isinstance(event, Envelope) else None
    # The cache is used only while it is what content_sha256 covers (a model_copy with new
    # fields carries the old cache along).
    if hashed is not None and sha256_hex(hashed) != event.content_sha256:
        hashed = None
    if hashed is None:
        body = event.model_dump() if isinstance(event, Envelope) else dict(event)
        body["prev_sha256"] = prev_sha256
        return canonical_json(body)
    # Sorted keys: content_sha256 sorts first, prev_sha256 between payload and producer. The
    # last top-level `,"producer":` is the envelope's own: inside strings quotes are escaped,
    # and nothing after the payload but the producer object can hold that key.
    cut = hashed.rfind(',"producer":')
    return (
        f'{{"content_sha256":"{event.content_sha256}",{hashed[1:cut]}'
        f',"prev_sha256":"{prev_sha256}"{hashed[cut:]}'
    )


def _scrubbed_line(
    event: Envelope | dict[str, Any], prev_sha256: str, scrubber: Scrubber
) -> tuple[str | None, int]:
    """The line with every secret replaced and the content hash recomputed over what remains;
    (None, 0) when nothing needed replacing."""
    body = event.model_dump() if isinstance(event, Envelope) else dict(event)
    content, count = scrubber.value(hashed_content(body))
    if not count:
        return None, 0
    content["content_sha256"] = canonical_sha256(content)
    content["prev_sha256"] = prev_sha256
    return canonical_json(content), count


class _IdScan:
    """Event ids (and the runs they belong to) in the log, read incrementally: a later `scan`
    reads only segments and bytes that appeared since the previous one."""

    def __init__(self, log: EventLog):
        self.log = log
        self.offsets: dict[str, int] = {}

    def scan(self, ids: set[str], skip: Iterable[str] = ()) -> tuple[set[str], set[str]]:
        """Adds new ids to `ids`; returns (ids, run ids of the lines read in this scan)."""
        runs: set[str] = set()
        skipped = set(skip)
        records = self.log.manifest_records()
        seals = self.log.seals(records)
        compressed = self.log.compressions(records)
        for segment in self.log.segments():
            if segment.name in skipped:
                continue
            start = self.offsets.get(segment.name, 0)
            sealed_bytes = seals.get(segment.name, {}).get("bytes")
            if start and start >= (sealed_bytes if sealed_bytes is not None else start + 1):
                continue  # read to its sealed end: nothing can follow (and no decompressing)
            indexed = None
            if start == 0 and sealed_bytes is not None and not segment.exists():
                indexed = self.log.id_index(segment, compressed.get(segment.name))
            if indexed is not None:  # a sealed, compressed segment: its ids without decompressing
                ids.update(indexed[0])
                runs.update(indexed[1])
                self.offsets[segment.name] = sealed_bytes
                continue
            try:
                if start == 0:
                    data = self.log.segment_bytes(segment)  # one-call decompression
                else:
                    with self.log.open_segment(segment) as handle:
                        handle.seek(start)
                        data = handle.read()
            except FileNotFoundError:
                continue
            end = data.rfind(b"\n") + 1  # a torn or half-written tail is read next time
            if end == 0:
                continue
            self.offsets[segment.name] = start + end
            found_ids, found_runs = _ids_in(data[:end])
            ids.update(found_ids)
            runs.update(found_runs)
        return ids, runs


def _ids_in(data: bytes) -> tuple[set[str], set[str]]:
    """(event ids, run ids) of the complete lines in `data`: each line's first marker (the
    envelope's; a payload's own string values cannot hold an unescaped quote)."""
    ids: set[str] = set()
    runs: set[str] = set()
    for line in data[: data.rfind(b"\n") + 1].split(b"\n"):
        at = line.find(_EVENT_ID_MARKER)
        if at >= 0:
            at += len(_EVENT_ID_MARKER)
            ids.add(line[at : at + 36].decode("ascii", "replace"))
        at = line.find(_RUN_ID_MARKER)
        if at >= 0:
            at += len(_RUN_ID_MARKER)
            runs.add(line[at : line.find(b'"', at)].decode("utf-8", "replace"))
    return ids, runs


# Run locks held by this process: path -> [handle, holders]. flock conflicts between two open
# files even within one process, so nested writers of one run in one process share the handle.
_HELD: dict[Path, list] = {}
_HELD_GUARD = threading.Lock()


class RunLock:
    def __init__(self, locks_dir: Path, run_id: str, wait_s: float):
        self.run_id = run_id
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run_id)
        self.path = locks_dir / f"run-{safe}.lock"
        self.wait_s = wait_s

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        with _HELD_GUARD:
            held = _HELD.get(self.path)
            if held is not None:
                held[1] += 1
                return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+b")  # noqa: SIM115 - held for the writer's life
        deadline = time.monotonic() + self.wait_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = self.holder()
                    handle.close()
                    raise RunLocked(self.run_id, holder, waited_s=self.wait_s) from None
                time.sleep(0.05)
        handle.truncate(0)
        handle.write(f"pid {os.getpid()} since {datetime.now(UTC).isoformat()}\n".encode())
        handle.flush()
        with _HELD_GUARD:
            _HELD[self.path] = [handle, 1]

    def holder(self) -> str:
        try:
            text = self.path.read_text(encoding="utf-8").strip()
        except OSError:
            text = ""
        return text or "pid unknown"

    def release(self) -> None:
        with _HELD_GUARD:
            held = _HELD.get(self.path)
            if held is None:
                return
            held[1] -= 1
            if held[1] > 0:
                return
            del _HELD[self.path]
        held[0].close()  # releases the flock; the file stays (unlinking would race a waiter)


class LogWriter:
    """Appends events to a fresh segment of its own; use as a context manager."""

    def __init__(self, log: EventLog, *, dedupe: bool, max_segment_bytes: int):
        self.log = log
        self.max_segment_bytes = max_segment_bytes
        self._scan = _IdScan(log)
        self._known = self._scan.scan(set())[0] if dedupe else None
        self._handle = None
        self._segment: Path | None = None
        self._own_segments: list[str] = []
        self._run_locks: dict[str, RunLock] = {}
        self._scrubber = Scrubber.from_env()
        self.appended = 0
        self.skipped_duplicates = 0
        self.scrubbed = 0  # secrets replaced, over the writer's life (never which)

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _lock_run(self, run_id: str) -> None:
        """Take the run's lock, then make sure nobody wrote the run since this writer read the
        log: a writer that planned its work from a stale log must not execute it again."""
        lock = self.log.run_lock(run_id)
        lock.acquire()
        try:
            if self._known is not None:
                _, runs = self._scan.scan(self._known, skip=self._own_segments)
                if run_id in runs:
                    raise RunLocked(run_id, "a writer that has since finished", advanced=True)
        except BaseException:
            lock.release()
            raise
        self._run_locks[run_id] = lock

    def _open_segment(self) -> None:
        """The segment gets its public name only once this writer holds its lock: `recover()`
        in another process must never see (and seal) a segment whose writer is alive."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        name = f"{stamp}-{os.getpid()}-{secrets.token_hex(2)}{SEGMENT_SUFFIX}"
        final = self.log.log_dir / name
        hidden = self.log.log_dir / f".{name}.opening"
        handle = open(hidden, "xb")  # noqa: SIM115 - lives as long as the writer
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with self.log._manifest_lock():
                self.log._append_record({"op": "open", "segment": name, "pid": os.getpid()})
                os.rename(hidden, final)
        except BaseException:
            handle.close()
            hidden.unlink(missing_ok=True)
            raise
        _fsync_dir(self.log.log_dir)
        self._prev = genesis_sha256(name)
        self._lines = 0
        self._bytes = 0
        self._scrubbed_in_segment = 0
        self._segment = final
        self._own_segments.append(name)
        self._handle = handle

    def append(self, events: Iterable[Envelope | dict[str, Any]]) -> int:
        """Write events, then flush and fsync once. Returns how many were new."""
        written = 0
        for event in events:
            if isinstance(event, Envelope):
                event_id, run_id = event.event_id, event.run_id
            else:
                event_id, run_id = event["event_id"], event["run_id"]
            if run_id not in self._run_locks:
                self._lock_run(run_id)
            if self._known is not None:
                if event_id in self._known:
                    self.skipped_duplicates += 1
                    continue
                self._known.add(event_id)
            if self._handle is None:
                self._open_segment()
            text = _line(event, self._prev)
            if self._scrubber.line_needs_scrub(text):
                scrubbed, count = _scrubbed_line(event, self._prev, self._scrubber)
                if scrubbed is not None:
                    text = scrubbed
                    self.scrubbed += count
                    self._scrubbed_in_segment += count
            line = text.encode("utf-8")
            if len(line) > MAX_EVENT_BYTES:
                if self._known is not None:
                    self._known.discard(event_id)
                raise EventTooLarge(
                    f"event {event_id} ({_event_type(event)}) is {len(line):,} bytes, over the "
                    f"log's limit of {MAX_EVENT_BYTES:,}: cap the body that produced it"
                )
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
        with self.log._manifest_lock():
            self.log._append_seal(
                self._segment.name,
                self._lines,
                self._bytes,
                self._prev,
                scrubbed=self._scrubbed_in_segment,
            )
        self._handle.close()  # releases the lock
        self._handle = None

    def close(self) -> None:
        try:
            self._close_segment()
        finally:
            for lock in self._run_locks.values():
                lock.release()
            self._run_locks.clear()
