"""Integrity check of the whole log: lines, chains, seals, the MANIFEST's Merkle tree, heads.

What each check catches (docs/log-integrity.md has the full table):
- a modified line -> content hash mismatch (or the next line's link, if the hash was redone);
- a deleted, inserted or reordered line -> chain break; a line moved between segments too
  (each segment's chain starts at a genesis hash of its own name);
- lines cut from or appended to a sealed segment -> seal mismatch;
- a segment file deleted -> a seal without its file; a segment no writer opened -> foreign;
- anything that rewrites what an earlier head covered (a deleted seal, a segment deleted with
  its MANIFEST lines, a full re-hash with new seals) -> the log no longer extends that head
  (`since`); with a public key, anything not covered by a validly signed head.

Every segment is checked (the first bad line of each is reported), so a caller can set aside
exactly the segments that fail. `fast=True` skips the per-line content hash (JSON parse +
canonical form): the chain, seals and tree still bind every byte, which is what ingest needs.
It also takes a compressed segment whose file has the sha256 its `compress` MANIFEST record
states as verified (its lines were, by the ingest that compressed it), so an ingest verifies
what changed, not the whole log again.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from warehouse.canonical import canonical_sha256, file_sha256, sha256_hex
from warehouse.events import hashed_content
from warehouse.log import (
    MANIFEST_NAME,
    EventLog,
    ManifestCorrupt,
    SegmentUnreadable,
    compressed_path,
    genesis_sha256,
    lines_in,
    tail_of,
)
from warehouse.merkle import LogHead, head_of, leaf_hash

_PREV_MARKER = b',"prev_sha256":"'


@dataclass(frozen=True)
class Problem:
    segment: str
    line: int | None
    kind: str
    detail: str

    def __str__(self) -> str:
        where = f"{self.segment}:{self.line}" if self.line is not None else self.segment
        return f"{where}: {self.kind}: {self.detail}"

    def to_json(self) -> dict[str, Any]:
        return {
            "segment": self.segment,
            "line": self.line,
            "kind": self.kind,
            "detail": self.detail,
        }

    @property
    def key(self) -> tuple[str, str]:
        """What an acceptance names: the segment (or MANIFEST) and the kind of problem."""
        return (self.segment, self.kind)


@dataclass
class VerifyReport:
    segments: int = 0
    events: int = 0
    problems: list[Problem] = field(default_factory=list)
    accepted: list[Problem] = field(default_factory=list)  # problems an `accept` record covers
    unsealed: list[str] = field(default_factory=list)
    # a bucket copy's segments its MANIFEST does not name yet: a push in flight, not loaded
    in_flight: list[str] = field(default_factory=list)
    head: LogHead | None = None
    signed_head: LogHead | None = None
    _segment_names: set[str] = field(default_factory=set)  # every segment named in the log

    @property
    def intact(self) -> bool:
        return not self.problems

    @property
    def manifest_failed(self) -> bool:
        """A problem of the MANIFEST or the heads as a whole, not of one segment."""
        return any(p.segment not in self._segment_names for p in self.problems)

    @property
    def failed_segments(self) -> set[str]:
        """Segments to set aside whole: every segment with a problem, accepted or not."""
        return {
            p.segment for p in (*self.problems, *self.accepted) if p.segment in self._segment_names
        }


def verify_log(
    log: EventLog,
    *,
    since: LogHead | None = None,
    public_key=None,
    fast: bool = False,
    vouched: Mapping[str, str] | None = None,
    bucket_copy: bool = False,
) -> VerifyReport:
    """`vouched` (fast only): {segment: sha256 of its compressed file} the caller verified
    line by line before and trusts, as a `compress` record is trusted (a builder's copies of
    other writers' segments, log_bucket.py). `bucket_copy`: the log is a writer's copy in a log
    bucket, where a push uploads segments, then signed heads, then the MANIFEST: a segment the
    MANIFEST does not name, or a signed head beyond it, is a push in flight (`in_flight`, not
    loaded), not a forgery or records removed (removal below what the builder loaded is caught
    by `since`, the head it holds)."""
    report = VerifyReport()
    problems: list[Problem] = []
    try:
        records = log.manifest_records()
    except ManifestCorrupt as exc:
        report.problems.append(Problem(MANIFEST_NAME, None, "manifest unreadable", str(exc)))
        return report
    manifest_tail = log.torn_tail(log.manifest_path) if log.manifest_path.exists() else None
    if manifest_tail is not None:
        problems.append(
            Problem(
                MANIFEST_NAME,
                len(records) + 1,
                "torn line",
                f"{manifest_tail[1]} bytes without a final newline (set aside by the next writer)",
            )
        )
    report.head = head_of([leaf_hash(r.data) for r in records], 0)
    seals = EventLog.seals(records)
    compressions = EventLog.compressions(records) if fast else {}
    opened = {r.record["segment"] for r in records if r.op == "open"}
    accepted_keys = {
        (p.get("segment", ""), p.get("kind", ""))
        for r in records
        if r.op == "accept"
        for p in r.record.get("problems", [])
    }
    present = {p.name for p in log.segments()}
    report._segment_names = present | set(seals) | opened
    for name in sorted(set(seals) - present):
        problems.append(
            Problem(name, None, "missing segment", "sealed in MANIFEST but the file is gone")
        )
    events = 0
    for segment in log.segments():
        seal = seals.get(segment.name)
        if bucket_copy and seal is None and segment.name not in opened:
            report.in_flight.append(segment.name)  # uploaded before the MANIFEST sealing it
            continue
        report.segments += 1
        if seal is not None and (
            _vouched(log, segment, compressions.get(segment.name))
            or (fast and vouched and _vouched(log, segment, {"sha256": vouched.get(segment.name)}))
        ):
            events += int(seal["lines"])
            continue
        problem, lines = _check_segment(log, segment, seal, fast)
        events += lines
        if problem is not None:
            problems.append(problem)
        elif segment.name not in seals:
            if segment.name not in opened and not _writer_alive(segment):
                problems.append(
                    Problem(
                        segment.name,
                        None,
                        "foreign segment",
                        "no writer opened it (no `open` record in MANIFEST): it was put there "
                        "by hand",
                    )
                )
            else:
                report.unsealed.append(segment.name)
    report.events = events
    report.head = LogHead(report.head.size, report.head.root, events)
    if since is not None:
        problems.extend(head_extension_problems(records, since, "the given head"))
    if public_key is not None:
        problems.extend(_check_signed(log, records, public_key, report, bucket_copy))
    for problem in problems:
        # Only a segment's problems can be accepted; a MANIFEST that no longer extends a head
        # is settled by trusting the new head (`log_trust.accept`), never waved through later.
        acceptable = problem.segment != MANIFEST_NAME and problem.kind != "bad signature"
        if acceptable and problem.key in accepted_keys:
            report.accepted.append(problem)
        else:
            report.problems.append(problem)
    return report


def head_extension_problems(records, head: LogHead, what: str) -> list[Problem]:
    """[] when the MANIFEST `records` extend `head` (its first `head.size` leaves hash to its
    root); else one MANIFEST problem saying how they do not."""
    if len(records) < head.size:
        return [
            Problem(
                MANIFEST_NAME,
                None,
                "does not extend head",
                f"{what} covers {head.size} MANIFEST records, the log has {len(records)}: "
                "records (seals, segments) were removed",
            )
        ]
    prefix = head_of([leaf_hash(r.data) for r in records[: head.size]])
    if prefix.root != head.root:
        return [
            Problem(
                MANIFEST_NAME,
                None,
                "does not extend head",
                f"the first {head.size} MANIFEST records hash to {prefix.root}, {what} says "
                f"{head.root}: what that head covered was rewritten",
            )
        ]
    return []


def _check_signed(
    log: EventLog, records, public_key, report: VerifyReport, bucket_copy: bool
) -> list[Problem]:
    from warehouse.signing import SIGNED_HEADS_NAME, signed_heads

    heads, bad = signed_heads(log.log_dir, public_key)
    problems = [Problem(SIGNED_HEADS_NAME, None, "bad signature", text) for text in bad]
    if bucket_copy:
        heads = [head for head in heads if head.size <= len(records)]
    if not records and not heads:
        return problems  # an empty log (a builder that collects nothing) has nothing to sign
    if not heads:
        problems.append(
            Problem(MANIFEST_NAME, None, "unsigned", "no head signed by this key was found")
        )
        return problems
    latest = max(heads, key=lambda h: h.size)
    report.signed_head = latest
    problems.extend(head_extension_problems(records, latest, "the last signed head"))
    if len(records) > latest.size:
        problems.append(
            Problem(
                MANIFEST_NAME,
                latest.size + 1,
                "unsigned records",
                f"{len(records) - latest.size} MANIFEST record(s) after the last signed head "
                f"(size {latest.size}) were added without the signing key",
            )
        )
    return problems


def _writer_alive(segment) -> bool:
    try:
        with open(segment, "rb") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
    except FileNotFoundError:
        pass
    return False


def _vouched(log: EventLog, segment, compression: dict[str, Any] | None) -> bool:
    """A compressed segment whose file is the one its `compress` record vouches for: its lines
    were verified when it was compressed, and this digest binds every byte of it since."""
    return (
        compression is not None
        and log.is_compressed(segment)
        and file_sha256(compressed_path(segment)) == compression.get("sha256")
    )


def _check_segment(log: EventLog, segment, seal, fast: bool) -> tuple[Problem | None, int]:
    expected_prev = genesis_sha256(segment.name)
    lines = 0
    size = 0
    try:
        data = log.segment_bytes(segment)  # read once (decompressed once): lines and tail
    except SegmentUnreadable as exc:
        return Problem(segment.name, None, "unreadable", str(exc)), lines
    for raw in lines_in(segment.name, data):
        lines += 1
        size += len(raw.data) + 1
        problem = _check_line(raw.data, expected_prev, fast)
        if problem:
            return Problem(segment.name, raw.line_no, *problem), lines
        expected_prev = sha256_hex(raw.data)
    tail = tail_of(data)
    del data
    if tail is not None:
        return Problem(
            segment.name, lines + 1, "torn line", f"{tail[1]} bytes without a final newline"
        ), lines
    if seal is None:
        return None, lines
    if (
        seal["lines"] != lines
        or seal["last_line_sha256"] != expected_prev
        or seal.get("bytes", size) != size
    ):
        return Problem(
            segment.name,
            lines,
            "seal mismatch",
            f"sealed with {seal['lines']} lines, found {lines}: lines were removed, appended "
            "or rewritten after sealing",
        ), lines
    return None, lines


def _check_line(data: bytes, expected_prev: str, fast: bool) -> tuple[str, str] | None:
    if fast and data.count(_PREV_MARKER) == 1 and data.startswith(b'{"content_sha256":"'):
        at = data.find(_PREV_MARKER) + len(_PREV_MARKER)
        if data[at : at + 64].decode("ascii", "replace") != expected_prev:
            return (
                "chain broken",
                "prev_sha256 does not match the previous line: a line was deleted, inserted "
                "or reordered",
            )
        return None
    try:
        event = json.loads(data)
    except (ValueError, RecursionError) as exc:
        return ("not JSON", str(exc)[:200])
    if not isinstance(event, dict) or "content_sha256" not in event or "prev_sha256" not in event:
        return ("not an event", "envelope fields content_sha256/prev_sha256 missing")
    if canonical_sha256(hashed_content(event)) != event["content_sha256"]:
        return ("modified", f"content hash mismatch for event {event.get('event_id')}")
    if event["prev_sha256"] != expected_prev:
        return (
            "chain broken",
            "prev_sha256 does not match the previous line: a line was deleted, inserted or reordered",
        )
    return None
