"""The log in object storage (issue #29): every writer's sealed segments and MANIFEST, uploaded
once under a prefix of its own; a builder mirrors every writer's prefix, verifies it and loads it.

Layout under `BENCH_LOG_BUCKET` (an S3 prefix, `s3://bucket/prefix`, or any fsspec URL: a
shared folder works the same way):

  <writer>/MANIFEST.jsonl           the writer's MANIFEST as of its last push
  <writer>/<segment>.jsonl.zst      each sealed segment, zstd: the very bytes `bench ingest`
                                    compresses it to locally (log.compress_segment)

A writer is a data root (`writer_id`: its machine and folder). Collectors keep writing local
segments exactly as before: object storage has no flock, fsync, rename or append, which the log
writer needs. `bench log push` uploads what is sealed and not in the bucket yet, segments first
and the MANIFEST last, so a MANIFEST in the bucket never seals a segment the bucket lacks (its
`open` records for segments still being written are harmless: an unsealed segment has no file).
An object is written once; each goes to a hidden name first and is renamed, so a reader never
sees half of one.

A builder mirrors every other writer's prefix into `<data root>/bucket/<writer>/`, a log folder
like any other (EventLog reads it), exactly as the bucket holds it: an object whose ETag or size
changed is fetched again and a deleted one is removed. Verification then sees what the bucket
holds and catches a changed or missing segment as it does locally. Each writer's log must also
extend the head the builder held for it after its last load (`bucket/<writer>.head.json`), so a
rewrite of a writer's history in the bucket, MANIFEST included, is caught too.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warehouse.canonical import file_sha256, sha256_hex
from warehouse.log import (
    COMPRESSED_SUFFIX,
    MANIFEST_NAME,
    EventLog,
    compress_segment,
    compressed_path,
)
from warehouse.merkle import LogHead, head_of, leaf_hash
from warehouse.paths import BenchPaths
from warehouse.signing import SIGNED_HEADS_NAME
from warehouse.verify import VerifyReport, verify_log

BUCKET_ENV = "BENCH_LOG_BUCKET"
MIRROR_DIR = "bucket"  # under the data root: one folder per writer, and its held head
_ETAGS = ".objects.json"  # in a writer's mirror folder: the ETag and size of each copied object


class LogBucketError(ValueError):
    """The bucket setting or the bucket itself is unusable: named, with what to do."""


def writer_id(paths: BenchPaths) -> str:
    """This data root as a writer: its machine, readable, and a digest of machine and folder
    (two data roots on one machine are two writers)."""
    host = "".join(c if c.isalnum() or c in "-_" else "-" for c in socket.gethostname())[:40]
    return f"{host or 'host'}-{sha256_hex(f'{socket.gethostname()}:{paths.home}'.encode())[:10]}"


@dataclass(frozen=True)
class LogBucket:
    url: str
    fs: Any  # an fsspec filesystem
    root: str  # the prefix inside it, without a trailing slash

    @classmethod
    def from_env(cls) -> LogBucket | None:
        url = os.environ.get(BUCKET_ENV, "").strip()
        return cls.open(url) if url else None

    @classmethod
    def open(cls, url: str) -> LogBucket:
        import fsspec

        try:
            # no listing cache: a builder must see what writers uploaded since its last look
            fs, root = fsspec.core.url_to_fs(url, use_listings_cache=False)
        except (ImportError, ValueError) as exc:
            raise LogBucketError(
                f"{BUCKET_ENV}={url}: not a storage URL this installation can open ({exc}); "
                "use s3://bucket/prefix (pip install 'bench-warehouse[lake]') or a folder"
            ) from None
        return cls(url, fs, root.rstrip("/"))

    def _key(self, *parts: str) -> str:
        return "/".join((self.root, *parts))

    @contextlib.contextmanager
    def _storage(self, what: str) -> Iterator[None]:
        """A storage failure (no such bucket, no credentials, refused) as one error naming the
        bucket and what was being done; the local log is untouched, so the command can be run
        again."""
        try:
            yield
        except LogBucketError:
            raise
        except Exception as exc:  # s3fs, botocore and the OS each raise their own
            raise LogBucketError(
                f"{BUCKET_ENV}={self.url}: {what} failed: {type(exc).__name__}: {exc}"
            ) from exc

    def writers(self) -> list[str]:
        with self._storage("listing the writers"):
            if not self.fs.exists(self.root):
                return []
            entries = self.fs.ls(self.root, detail=True)
        return sorted(
            Path(entry["name"]).name
            for entry in entries
            if entry["type"] == "directory" and not Path(entry["name"]).name.startswith(".")
        )

    def objects(self, writer: str) -> dict[str, dict[str, Any]]:
        """{name: {"etag", "size"}} of every object a writer uploaded (hidden names excluded:
        uploads in flight)."""
        prefix = self._key(writer)
        with self._storage(f"listing {prefix}"):
            entries = self.fs.ls(prefix, detail=True) if self.fs.exists(prefix) else []
        found = {}
        for entry in entries:
            name = Path(entry["name"]).name
            if entry["type"] == "file" and not name.startswith("."):
                etag = entry.get("ETag") or entry.get("mtime") or ""
                found[name] = {"etag": str(etag), "size": int(entry["size"])}
        return found

    def put(self, writer: str, name: str, source: Path) -> None:
        """Upload a file under a hidden name, then rename it: whole or not at all."""
        hidden = self._key(writer, f".{name}.partial")
        with self._storage(f"uploading {self._key(writer, name)}"):
            self.fs.makedirs(self._key(writer), exist_ok=True)  # a folder needs it; S3 does not
            self.fs.put_file(str(source), hidden)
            self.fs.mv(hidden, self._key(writer, name))

    def get(self, writer: str, name: str, target: Path) -> None:
        partial = target.with_name(f".{target.name}.partial")
        with self._storage(f"downloading {self._key(writer, name)}"):
            self.fs.get_file(self._key(writer, name), str(partial))
        os.replace(partial, target)


# --- a collecting machine: push ----------------------------------------------------------------


@dataclass
class PushResult:
    writer: str
    uploaded: list[str] = field(default_factory=list)
    already: int = 0  # sealed segments the bucket held before this push
    manifest_records: int = 0


def push(log: EventLog, bucket: LogBucket, writer: str) -> PushResult:
    """Upload every sealed segment the bucket lacks, then the writer's signed heads when it
    signs, then the MANIFEST they are sealed in. A signing writer's MANIFEST goes up only as far
    as its last signed head (the rest waits for the next signature), and after the heads: a
    reader of the bucket, even mid-push, finds a MANIFEST that some signed head covers exactly."""
    records = log.manifest_records()  # one reading: the segments and MANIFEST pushed agree
    signed = _signed_heads_file(log)
    if signed is not None:
        records = records[: _last_signed_size(signed)]
    result = PushResult(writer, manifest_records=len(records))
    if not records:
        return result
    there = bucket.objects(writer)
    for name in EventLog.seals(records):
        stored = name + COMPRESSED_SUFFIX
        if stored in there:
            result.already += 1
            continue
        segment = log.log_dir / name
        if segment.exists():
            with tempfile.TemporaryDirectory(prefix="bench-push-") as scratch:
                packed = Path(scratch) / stored
                compress_segment(segment, packed)
                bucket.put(writer, stored, packed)
        elif compressed_path(segment).exists():
            bucket.put(writer, stored, compressed_path(segment))
        else:
            continue  # gone from this log: `bench verify` reports it here, nothing to upload
        result.uploaded.append(name)
    with tempfile.TemporaryDirectory(prefix="bench-push-") as scratch:
        if signed is not None:
            heads = Path(scratch) / SIGNED_HEADS_NAME
            heads.write_bytes(signed)  # the bytes read above: the MANIFEST cut matches them
            bucket.put(writer, SIGNED_HEADS_NAME, heads)
        manifest = Path(scratch) / MANIFEST_NAME
        manifest.write_bytes(b"".join(r.data + b"\n" for r in records))
        bucket.put(writer, MANIFEST_NAME, manifest)
    return result


def _signed_heads_file(log: EventLog) -> bytes | None:
    """The writer's signed heads (warehouse/signing.py), whole lines only; None when it does
    not sign."""
    path = log.log_dir / SIGNED_HEADS_NAME
    if not path.exists():
        return None
    data = path.read_bytes()
    return data[: data.rfind(b"\n") + 1]


def _last_signed_size(signed: bytes) -> int:
    """How many MANIFEST records the writer's latest signed head covers. The writer's own
    file: its signatures are checked where it is read (the builder), not here."""
    sizes = [int(json.loads(line)["size"]) for line in signed.splitlines() if line.strip()]
    return max(sizes, default=0)


# --- the builder: mirror, verify, hold heads ---------------------------------------------------


@dataclass
class WriterLog:
    writer: str
    log: EventLog
    report: VerifyReport
    fetched: int = 0  # objects copied (new or changed in the bucket)
    removed: int = 0  # copies of objects the bucket no longer holds

    def held_back(self) -> set[str]:
        """Segments to hold back whole: every one when the MANIFEST failed (nothing says which
        segment is to blame), else those of a push in flight (not sealed in the MANIFEST yet).
        A segment that failed on its own is in `report.failed_segments`, which the caller sets
        aside and purges, as for its own log."""
        if self.report.manifest_failed:
            return {s.name for s in self.log.segments()}
        return set(self.report.in_flight)


def mirror_root(paths: BenchPaths) -> Path:
    return paths.home / MIRROR_DIR


def sync_writer(bucket: LogBucket, writer: str, folder: Path) -> tuple[int, int]:
    """Make `folder` hold exactly what the bucket holds for `writer`; (fetched, removed)."""
    folder.mkdir(parents=True, exist_ok=True)
    index_path = folder / _ETAGS
    copied = json.loads(index_path.read_text()) if index_path.exists() else {}
    there = bucket.objects(writer)
    fetched = removed = 0
    for name, stamp in sorted(there.items()):
        if copied.get(name) == stamp and (folder / name).exists():
            continue
        bucket.get(writer, name, folder / name)
        copied[name] = stamp
        fetched += 1
    for path in folder.iterdir():
        if path.name.startswith(".") or path.name in there:
            continue
        path.unlink()  # the bucket no longer holds it: verification must not see it either
        copied.pop(path.name, None)
        removed += 1
    index_path.write_text(json.dumps(copied, sort_keys=True))
    return fetched, removed


def held_head(paths: BenchPaths, writer: str) -> LogHead | None:
    path = mirror_root(paths) / f"{writer}.head.json"
    if not path.exists():
        return None
    held = json.loads(path.read_text())
    return LogHead(int(held["size"]), str(held["root"]), int(held.get("events", 0)))


def hold(paths: BenchPaths, writer: WriterLog) -> None:
    """Vouch for a writer's log once it verified and loaded: every later copy of it must
    extend its head, and a copied segment whose file is unchanged (its sha256) need not be
    read line by line again (as a `compress` record spares the local log that)."""
    if not writer.report.intact or writer.report.head is None:
        return
    _write_json(mirror_root(paths) / f"{writer.writer}.head.json", writer.report.head.to_json())
    files = {
        segment.name: file_sha256(compressed_path(segment))
        for segment in writer.log.segments()
        if segment.name not in writer.report.in_flight  # not verified: not sealed yet
    }
    _write_json(mirror_root(paths) / f"{writer.writer}.verified.json", files)


def _write_json(path: Path, document: dict[str, Any]) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(document, sort_keys=True))
    os.replace(partial, path)


def _verified_files(paths: BenchPaths, writer: str) -> dict[str, str]:
    path = mirror_root(paths) / f"{writer}.verified.json"
    return json.loads(path.read_text()) if path.exists() else {}


def mirrored_logs(
    paths: BenchPaths, bucket: LogBucket, *, fast: bool = True, public_key=None
) -> list[WriterLog]:
    """Every other writer's log, copied from the bucket and verified against its held head
    (`fast`: as ingest verifies, verify_log) and, with `public_key` (BENCH_LOG_PUBLIC_KEY), held
    to heads signed by it: a writer without them, or records past them, load nothing."""
    own = writer_id(paths)
    logs = []
    for writer in bucket.writers():
        if writer == own:
            continue  # this data root's own log is read where it is written
        folder = mirror_root(paths) / writer
        fetched, removed = sync_writer(bucket, writer, folder)
        log = EventLog(folder)
        report = verify_log(
            log,
            since=held_head(paths, writer),
            fast=fast,
            vouched=_verified_files(paths, writer),
            public_key=public_key,
            bucket_copy=True,
        )
        logs.append(WriterLog(writer, log, report, fetched, removed))
    return logs


def union_head(heads: dict[str, LogHead]) -> LogHead:
    """One head over every writer's log: the Merkle root of each writer's `writer size:root`
    in writer order, so it changes when any writer's log does."""
    leaves = [f"{writer} {heads[writer]}".encode() for writer in sorted(heads)]
    return head_of(
        [leaf_hash(leaf) for leaf in leaves], sum(head.events for head in heads.values())
    )
