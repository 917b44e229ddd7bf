"""Sixteen-plus ways to tamper with the log: every one is caught by `verify --since HEAD` (a
head recorded before the tampering) and refused by ingest (failing segments set aside, rows
removed, non-zero) and rebuild (refused outright)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from tests.log_files import remove_segment, segment_bytes, write_segment
from transform import pipeline
from warehouse.canonical import canonical_json, canonical_sha256, sha256_hex
from warehouse.events import ItemRegistered, hashed_content, make_event
from warehouse.log import EventLog, genesis_sha256
from warehouse.log_trust import LogVerificationFailed, last_trusted_head
from warehouse.merkle import LogHead, head_of, leaf_hash, tree_root
from warehouse.paths import BenchPaths
from warehouse.provenance import producer_for
from warehouse.signing import generate_key, public_key_from
from warehouse.verify import verify_log

pytestmark = pytest.mark.slow
PRODUCER = producer_for({"test": "tamper"})
MARK = "TAMPERED"


def item_event(i: int, run_id: str):
    return make_event(
        ItemRegistered(
            item_id=f"item-{i}",
            dataset_sha256="0" * 64,
            position=i,
            ground_truth_text=f"text {i}",
            anchors=[f"text {i}"],
            anchor_rule_version="1",
        ),
        run_id=run_id,
        producer=PRODUCER,
    )


# --- tampering helpers --------------------------------------------------------------------


def _segments(log: EventLog) -> list[Path]:
    return log.segments()


def _lines(path: Path) -> list[bytes]:
    return segment_bytes(path).splitlines()


def _write_lines(path: Path, lines: list[bytes]) -> None:
    write_segment(path, b"".join(line + b"\n" for line in lines))


def _rechain(name: str, events: list[dict]) -> list[bytes]:
    """What a careful forger does: recompute every content hash and the whole chain."""
    prev, out = genesis_sha256(name), []
    for event in events:
        body = hashed_content(event)
        body["content_sha256"] = canonical_sha256(body)
        body["prev_sha256"] = prev
        line = canonical_json(body).encode()
        out.append(line)
        prev = sha256_hex(line)
    return out


def _manifest(log: EventLog) -> list[dict]:
    return [json.loads(line) for line in log.manifest_path.read_text().splitlines()]


def _write_manifest(log: EventLog, records: list[dict]) -> None:
    log.manifest_path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))


def _reseal(log: EventLog, name: str, lines: list[bytes]) -> None:
    records = _manifest(log)
    for record in records:
        if record.get("op") == "seal" and record["segment"] == name:
            record["lines"] = len(lines)
            record["bytes"] = sum(len(line) + 1 for line in lines)
            record["last_line_sha256"] = sha256_hex(lines[-1])
    _write_manifest(log, records)


def _edit_event(line: bytes) -> dict:
    event = json.loads(line)
    event["payload"]["ground_truth_text"] = MARK
    return event


def modify_line(log):
    seg = _segments(log)[0]
    lines = _lines(seg)
    lines[1] = lines[1].replace(b"text 1", MARK.encode())
    _write_lines(seg, lines)


def modify_and_rehash_line(log):
    seg = _segments(log)[0]
    lines = _lines(seg)
    event = _edit_event(lines[1])
    body = hashed_content(event)
    event["content_sha256"] = canonical_sha256(body)
    lines[1] = canonical_json(event).encode()
    _write_lines(seg, lines)


def delete_line(log):
    seg = _segments(log)[0]
    lines = _lines(seg)
    del lines[2]
    _write_lines(seg, lines)


def insert_duplicate_line(log):
    seg = _segments(log)[0]
    lines = _lines(seg)
    lines.insert(2, lines[1])
    _write_lines(seg, lines)


def reorder_lines(log):
    seg = _segments(log)[0]
    lines = _lines(seg)
    lines[1], lines[2] = lines[2], lines[1]
    _write_lines(seg, lines)


def move_line_between_segments(log):
    first, second = _segments(log)[:2]
    a, b = _lines(first), _lines(second)
    b.append(a.pop())
    _write_lines(first, a)
    _write_lines(second, b)


def cut_last_line(log):
    seg = _segments(log)[0]
    _write_lines(seg, _lines(seg)[:-1])


def append_chained_line(log):
    seg = _segments(log)[0]
    lines = _lines(seg)
    events = [json.loads(line) for line in lines] + [_edit_event(lines[0])]
    events[-1]["event_id"] = "00000000-0000-0000-0000-000000000001"
    _write_lines(seg, _rechain(seg.name, events))


def append_line_and_remove_seal(log):
    seg = _segments(log)[0]
    append_chained_line(log)
    _write_manifest(
        log, [r for r in _manifest(log) if not (r.get("op") == "seal" and r["segment"] == seg.name)]
    )


def delete_segment(log):
    remove_segment(_segments(log)[1])


def delete_segment_and_its_manifest_lines(log):
    seg = _segments(log)[1]
    remove_segment(seg)
    _write_manifest(log, [r for r in _manifest(log) if r["segment"] != seg.name])


def forged_new_segment(log):
    """Dropped in by hand: well-formed, chained, but no writer opened it."""
    name = "29991231T000000000000Z-1-f0f0.jsonl"
    event = _edit_event(_lines(_segments(log)[0])[0])
    event["event_id"] = "00000000-0000-0000-0000-000000000002"
    _write_lines(log.log_dir / name, _rechain(name, [event]))


def forged_new_segment_with_manifest_records(log):
    """The forger also writes `open` and `seal` records: only a signed head catches this."""
    name = "29991231T000000000000Z-1-f1f1.jsonl"
    event = _edit_event(_lines(_segments(log)[0])[0])
    event["event_id"] = "00000000-0000-0000-0000-000000000003"
    lines = _rechain(name, [event])
    _write_lines(log.log_dir / name, lines)
    records = _manifest(log)
    records.append({"op": "open", "segment": name, "pid": 1})
    records.append(
        {
            "op": "seal",
            "segment": name,
            "lines": 1,
            "bytes": len(lines[0]) + 1,
            "last_line_sha256": sha256_hex(lines[0]),
        }
    )
    _write_manifest(log, records)


def full_rehash(log):
    """Rewrite a segment, redo every content hash, the chain and its seal."""
    seg = _segments(log)[0]
    events = [_edit_event(line) for line in _lines(seg)]
    lines = _rechain(seg.name, events)
    _write_lines(seg, lines)
    _reseal(log, seg.name, lines)


def edit_seal_record(log):
    records = _manifest(log)
    seal = next(r for r in records if r.get("op") == "seal")
    seal["lines"] += 1
    _write_manifest(log, records)


def drop_last_manifest_record(log):
    _write_manifest(log, _manifest(log)[:-1])


def reorder_manifest(log):
    records = _manifest(log)
    records[0], records[1] = records[1], records[0]
    _write_manifest(log, records)


def rehash_and_forge_acceptance(log):
    full_rehash(log)
    records = _manifest(log)
    seg = _segments(log)[0].name
    records.append(
        {
            "op": "accept",
            "segment": "",
            "reason": "x",
            "problems": [{"segment": seg, "kind": "modified"}],
        }
    )
    _write_manifest(log, records)


def torn_garbage_on_sealed_segment(log):
    seg = _segments(log)[2]
    write_segment(seg, segment_bytes(seg) + b'{"event_id":"' + MARK.encode())


def forged_signed_head(log):
    """Rewrite, then append a head 'signed' with a key that is not the configured one."""
    from warehouse.signing import sign_head

    full_rehash(log)
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    sign_head(log.log_dir, Ed25519PrivateKey.generate(), log.head())


SCENARIOS: dict[str, tuple[Callable[[EventLog], None], bool]] = {
    "modified line": (modify_line, False),
    "modified line, content hash redone": (modify_and_rehash_line, False),
    "deleted line": (delete_line, False),
    "inserted duplicate line": (insert_duplicate_line, False),
    "reordered lines": (reorder_lines, False),
    "line moved to another segment": (move_line_between_segments, False),
    "last line cut from a sealed segment": (cut_last_line, False),
    "chained line appended to a sealed segment": (append_chained_line, False),
    "appended line with its seal removed": (append_line_and_remove_seal, False),
    "deleted segment": (delete_segment, False),
    "deleted segment and its MANIFEST lines": (delete_segment_and_its_manifest_lines, False),
    "forged new segment": (forged_new_segment, False),
    "forged new segment with forged MANIFEST records": (
        forged_new_segment_with_manifest_records,
        True,
    ),
    "full re-hash of a segment and its seal": (full_rehash, False),
    "edited seal record": (edit_seal_record, False),
    "dropped last MANIFEST record": (drop_last_manifest_record, False),
    "reordered MANIFEST records": (reorder_manifest, False),
    "full re-hash plus a forged acceptance": (rehash_and_forge_acceptance, False),
    "torn bytes appended to a sealed segment": (torn_garbage_on_sealed_segment, False),
    "full re-hash with a head signed by another key": (forged_signed_head, True),
}


# --- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    root = tmp_path_factory.mktemp("keys")
    private, public = root / "log.key", root / "log.key.pub"
    generate_key(private, public)
    return private, public


@pytest.fixture(scope="module")
def clean_home(tmp_path_factory, keys):
    """Three sealed segments written with the signing key, ingested once (head trusted)."""
    home = tmp_path_factory.mktemp("clean") / "home"
    mp = pytest.MonkeyPatch()
    mp.setenv("BENCH_LOG_SIGNING_KEY", str(keys[0]))
    try:
        paths = BenchPaths.from_env(home).ensure()
        log = pipeline.event_log(paths)
        for run in range(3):
            with log.writer() as writer:
                writer.append([item_event(i, f"run-{run}") for i in range(run * 4, run * 4 + 4)])
        result = pipeline.ingest(paths)
        assert result.verification.intact and result.loaded_events == 12
    finally:
        mp.undo()
    return home


def _tampered(clean_home: Path, tmp_path: Path, tamper) -> tuple[BenchPaths, LogHead]:
    home = tmp_path / "home"
    shutil.copytree(clean_home, home)
    paths = BenchPaths.from_env(home)
    head = last_trusted_head(paths)
    assert head is not None and head == pipeline.event_log(paths).head()
    tamper(pipeline.event_log(paths))
    return paths, head


def _raw_payloads(paths: BenchPaths) -> list[str]:
    with duckdb.connect(str(paths.warehouse_db), read_only=True) as con:
        return [row[0] for row in con.execute("select payload::varchar from raw.events").fetchall()]


def test_the_clean_log_verifies_against_its_head(clean_home, keys, tmp_path):
    paths, head = _tampered(clean_home, tmp_path, lambda log: None)
    log = pipeline.event_log(paths)
    report = verify_log(log, since=head, public_key=public_key_from(keys[1]))
    assert report.intact, report.problems
    assert report.signed_head == log.head() == head


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_tampering_is_caught_and_refused(name, clean_home, keys, tmp_path, monkeypatch):
    tamper, needs_key = SCENARIOS[name]
    paths, head = _tampered(clean_home, tmp_path, tamper)
    log = pipeline.event_log(paths)
    public = public_key_from(keys[1]) if needs_key else None
    report = verify_log(log, since=head, public_key=public)
    assert not report.intact, f"{name}: verify --since passed"
    assert all(str(p) for p in report.problems)

    if needs_key:
        monkeypatch.setenv("BENCH_LOG_PUBLIC_KEY", str(keys[1]))
    result = pipeline.ingest(paths)
    assert not result.verification.intact, f"{name}: ingest accepted it"
    payloads = _raw_payloads(paths)
    assert not [p for p in payloads if MARK in p], f"{name}: tampered rows were loaded"
    with pytest.raises(LogVerificationFailed):
        pipeline.rebuild(paths)
    assert not list(paths.home.glob("*.rebuild.*"))


def test_acceptance_is_recorded_and_clears_the_failure(clean_home, tmp_path):
    from warehouse.log_trust import accept, load_verification

    paths, head = _tampered(clean_home, tmp_path, forged_new_segment)
    pipeline.ingest(paths)
    assert load_verification(paths)["status"] == "failed"
    report, new_head = accept(paths, "the forged segment is a test fixture; it stays set aside")
    assert report.intact and report.accepted
    assert load_verification(paths)["status"] == "accepted"
    assert new_head.size == head.size + 1  # the acceptance is a leaf of the tree
    assert _manifest(pipeline.event_log(paths))[-1]["op"] == "accept"
    result = pipeline.ingest(paths)
    assert result.verification.intact
    assert not [p for p in _raw_payloads(paths) if MARK in p]  # still set aside


def test_merkle_root_matches_the_rfc6962_recursion():
    import hashlib

    def mth(items: list[bytes]) -> bytes:
        if not items:
            return hashlib.sha256(b"").digest()
        if len(items) == 1:
            return hashlib.sha256(b"\x00" + items[0]).digest()
        k = 1
        while k * 2 < len(items):
            k *= 2
        return hashlib.sha256(b"\x01" + mth(items[:k]) + mth(items[k:])).digest()

    for n in range(0, 40):
        items = [f"leaf {i}".encode() for i in range(n)]
        assert tree_root([leaf_hash(x) for x in items]) == mth(items), n
    assert head_of([leaf_hash(b"a")]).size == 1
