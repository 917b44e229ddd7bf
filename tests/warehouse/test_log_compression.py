"""Sealed segments are stored zstd-compressed once ingest has loaded them (issue #26: the log was
6 GB per million verdicts). Compression changes how a segment is stored, never what it holds:
its name, lines, chain, seal and the log's head are the same, every reader sees the same bytes,
and a kill at any point of it leaves one whole copy."""

from __future__ import annotations

import json

import duckdb
import pytest
import zstandard

from tests.log_files import item_events, segment_bytes
from transform import pipeline
from warehouse.log import EventLog, compressed_path, id_index_path
from warehouse.log_trust import last_trusted_head
from warehouse.paths import BenchPaths
from warehouse.verify import verify_log


def items(start: int, stop: int, run_id: str = "run-compress", *, sentences: int = 60):
    """Events with a long, repetitive English body (~44 bytes a sentence), as reports are."""
    body = " ".join(f"the report cites source {i % 23} for its claim" for i in range(sentences))
    return item_events(
        run_id,
        start,
        stop - start,
        tool="log-compression",
        text=lambda i: f"{i}: {body}",
        anchors=lambda i: [f"source {i % 23}"],
    )


@pytest.fixture
def root(tmp_path):
    paths = BenchPaths.from_env(tmp_path / "home").ensure()
    log = pipeline.event_log(paths)

    def ingest(**kwargs):
        return pipeline.ingest(paths, **kwargs)

    def rows():
        with duckdb.connect(str(paths.warehouse_db), read_only=True) as con:
            return con.execute(
                "select count(*), count(distinct event_id) from raw.events"
            ).fetchone()

    return log, ingest, rows


def append(log: EventLog, events) -> None:
    with log.writer() as writer:
        writer.append(events)


def raw_lines(log: EventLog) -> list[tuple[str, int, bytes]]:
    return [(raw.segment, raw.line_no, raw.data) for raw, _ in log.read()]


def test_ingest_compresses_what_it_loaded_and_nothing_a_reader_sees_changes(root):
    log, ingest, rows = root
    append(log, items(0, 300))
    append(log, items(300, 400, run_id="run-other"))
    before = raw_lines(log)
    head = log.head()
    plain_bytes = sum(s.stat().st_size for s in log.segments())

    result = ingest()

    assert result.loaded_events == 400
    assert result.compressed_segments == 2
    segments = log.segments()
    assert all(log.is_compressed(s) for s in segments)
    assert [s.name for s in segments] == sorted({name for name, _, _ in before})
    assert raw_lines(log) == before
    # the MANIFEST gained one `compress` record a segment, and that head is the trusted one
    after = log.head()
    assert (after.size, after.events) == (head.size + 2, head.events)
    assert last_trusted_head(BenchPaths.from_env(log.log_dir.parent)) == after
    report = verify_log(log)
    assert report.intact, report.problems
    stored = sum(compressed_path(s).stat().st_size for s in segments)
    assert stored * 4 < plain_bytes, (stored, plain_bytes)
    assert rows() == (400, 400)


def test_later_ingests_load_only_new_events_and_a_full_one_reads_the_compressed_log(root):
    log, ingest, rows = root
    append(log, items(0, 50))
    ingest()
    append(log, items(50, 80))
    second = ingest()
    assert (second.lines_read, second.loaded_events) == (30, 30)
    assert ingest().lines_read == 0
    assert ingest(full=True).lines_read == 80
    assert rows() == (80, 80)


def test_a_writer_opened_after_compression_still_skips_known_events(root):
    log, ingest, _ = root
    append(log, items(0, 20))
    ingest()
    with log.writer() as writer:
        assert writer.append(items(0, 25)) == 5
        assert writer.skipped_duplicates == 20


def _no_decompressing(monkeypatch, log: EventLog) -> list[str]:
    """Record every read of a compressed segment's bytes (the names asked for)."""
    asked: list[str] = []
    original = EventLog.segment_bytes

    def segment_bytes(self, segment):
        if self.is_compressed(segment):
            asked.append(segment.name)
        return original(self, segment)

    monkeypatch.setattr(EventLog, "segment_bytes", segment_bytes)
    return asked


def test_a_writer_reads_a_compressed_segments_ids_from_its_index(root, monkeypatch):
    log, ingest, _ = root
    append(log, items(0, 40))
    append(log, items(40, 70, run_id="run-other"))
    ingest()
    expected = {event["event_id"] for _, event in log.read()}
    asked = _no_decompressing(monkeypatch, log)
    assert log.known_event_ids() == expected
    assert asked == []  # no segment decompressed: every one had its index
    with log.writer() as writer:
        assert writer.append([*items(0, 5), *items(70, 72)]) == 2
        assert writer.skipped_duplicates == 5


@pytest.mark.parametrize("damage", ["edited", "removed", "recorded-before-indexes"])
def test_an_index_the_manifest_does_not_vouch_for_is_not_used(root, monkeypatch, damage):
    """A changed or missing index, or a log compressed before indexes existed: the writer
    reads the segment itself, and knows the same ids."""
    log, ingest, _ = root
    append(log, items(0, 30))
    ingest()
    (segment,) = log.segments()
    index = id_index_path(segment)
    if damage == "edited":  # an id left out would make the writer write that event again
        body = json.loads(zstandard.ZstdDecompressor().decompress(index.read_bytes()))
        body["event_ids"] = body["event_ids"][1:]
        index.write_bytes(zstandard.ZstdCompressor().compress(json.dumps(body).encode()))
    elif damage == "removed":
        index.unlink()
    else:  # the MANIFEST as a log compressed before indexes were written has it
        records = [json.loads(line) for line in log.manifest_path.read_text().splitlines()]
        assert sum("ids_sha256" in record for record in records) == 1
        lines = [
            json.dumps({k: v for k, v in record.items() if k != "ids_sha256"}) for record in records
        ]
        log.manifest_path.write_text("\n".join(lines) + "\n")
    expected = {event["event_id"] for _, event in log.read()}
    asked = _no_decompressing(monkeypatch, log)
    assert log.known_event_ids() == expected
    assert asked == [segment.name]  # read from the segment itself


def test_an_open_segment_is_never_compressed(root):
    log, ingest, _ = root
    with log.writer() as writer:
        writer.append(items(0, 10))
        ingest()  # the writer is alive: its segment is not sealed yet
        (segment,) = log.segments()
        assert not log.is_compressed(segment)
    assert log.compress_sealed() == [segment.name]
    assert log.is_compressed(segment)


def test_a_kill_inside_compression_leaves_one_whole_copy(root):
    log, _, _ = root
    append(log, items(0, 40))
    (segment,) = log.segments()
    before = raw_lines(log)

    # killed while writing the compressed copy: a hidden partial file, not a segment
    partial = log.log_dir / f".{compressed_path(segment).name}.partial"
    partial.write_bytes(b"half a frame")
    assert log.segments() == [segment]
    assert raw_lines(log) == before

    # killed between the rename and the removal of the plain file: both stored, one segment
    compressed_path(segment).write_bytes(zstandard.ZstdCompressor().compress(segment.read_bytes()))
    assert log.segments() == [segment]
    assert raw_lines(log) == before
    assert verify_log(log).intact

    assert log.compress_sealed() == [segment.name]
    assert not segment.exists()
    assert raw_lines(log) == before
    assert verify_log(log).intact

    # killed after the `compress` record, before the plain file went: only that is left to do
    write_plain_copy(segment, before)
    records = len(log.manifest_records())
    assert log.compress_sealed() == [segment.name]
    assert len(log.manifest_records()) == records
    assert not segment.exists() and raw_lines(log) == before


def test_a_damaged_compressed_segment_fails_verification_by_name(root):
    log, ingest, _ = root
    append(log, items(0, 40))
    ingest()
    (segment,) = log.segments()
    stored = compressed_path(segment)
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0xFF
    stored.write_bytes(bytes(data))

    report = verify_log(log)

    assert not report.intact
    assert [p.segment for p in report.problems] == [segment.name]


def write_plain_copy(segment, lines) -> None:
    segment.write_bytes(b"".join(data + b"\n" for _, _, data in lines))


def test_a_fast_verification_takes_a_recorded_compressed_file_by_its_digest(root, monkeypatch):
    log, ingest, _ = root
    append(log, items(0, 40))
    ingest()
    (segment,) = log.segments()
    with monkeypatch.context() as patched:
        patched.setattr(EventLog, "segment_bytes", _never_read)
        assert verify_log(log, fast=True).intact  # by digest: no line read
        with pytest.raises(AssertionError, match="read"):
            verify_log(log)  # the full check reads every line

    # the compressed file replaced by another that decompresses fine: not the recorded digest,
    # so its lines are read and checked, and the edit is found
    edited = segment_bytes(segment).replace(b"cites source 1 ", b"cites source 9 ", 1)
    compressed_path(segment).write_bytes(zstandard.ZstdCompressor().compress(edited))
    report = verify_log(log, fast=True)
    assert not report.intact
    assert [p.segment for p in report.problems] == [segment.name]


def _never_read(self, segment):
    raise AssertionError(f"read {segment.name}")
