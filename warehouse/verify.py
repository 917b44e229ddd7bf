"""Integrity check of the whole log: content hashes, the chain, and the seals.

Names the first bad segment and line. Modified line -> content hash mismatch (or the next
line's link breaks if the hash was recomputed); deleted, inserted or reordered line -> chain
break; lines cut from the end of a sealed segment -> seal mismatch; a deleted segment -> a seal
without its file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from warehouse.canonical import canonical_sha256, sha256_hex
from warehouse.events import hashed_content
from warehouse.log import EventLog, genesis_sha256


@dataclass(frozen=True)
class Problem:
    segment: str
    line: int | None
    kind: str
    detail: str

    def __str__(self) -> str:
        where = f"{self.segment}:{self.line}" if self.line is not None else self.segment
        return f"{where}: {self.kind}: {self.detail}"


@dataclass
class VerifyReport:
    segments: int = 0
    events: int = 0
    problems: list[Problem] = field(default_factory=list)
    unsealed: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.problems


def verify_log(log: EventLog) -> VerifyReport:
    report = VerifyReport()
    seals = log.manifest()
    present = {p.name for p in log.segments()}
    for name in sorted(set(seals) - present):
        report.problems.append(
            Problem(name, None, "missing segment", "sealed in MANIFEST but the file is gone")
        )
    for segment in log.segments():
        report.segments += 1
        expected_prev = genesis_sha256(segment.name)
        lines = 0
        for lines, raw in enumerate(log.iter_raw(segment), start=1):  # noqa: B007 - used after the loop
            report.events += 1
            problem = _check_line(raw.data, expected_prev)
            if problem:
                report.problems.append(Problem(segment.name, raw.line_no, *problem))
                break
            expected_prev = sha256_hex(raw.data)
        else:
            tail = log.torn_tail(segment)
            seal = seals.get(segment.name)
            if tail is not None:
                report.problems.append(
                    Problem(
                        segment.name,
                        lines + 1,
                        "torn line",
                        f"{tail[1]} bytes without a final newline",
                    )
                )
            elif seal is None:
                report.unsealed.append(segment.name)
            elif seal["lines"] != lines or seal["last_line_sha256"] != expected_prev:
                report.problems.append(
                    Problem(
                        segment.name,
                        lines,
                        "seal mismatch",
                        f"sealed with {seal['lines']} lines, found {lines}: lines were removed or appended after sealing",
                    )
                )
        if report.problems:
            break  # the first bad segment is what the user needs; later ones may be fine
    return report


def _check_line(data: bytes, expected_prev: str) -> tuple[str, str] | None:
    try:
        event = json.loads(data)
    except ValueError as exc:
        return ("not JSON", str(exc))
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
