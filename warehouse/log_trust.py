"""What this data root believes about its log: the heads it vouched for, the last verification.

Ingest, rebuild, publish and `bench verify` check the log against every head the data root
holds: the last one recorded in `heads.jsonl` and the one the serving snapshot was published
from (`main._publish.metadata.log_head`), plus the public key when one is configured. A missing
`heads.jsonl` beside a snapshot that holds a head is a failure, not a fresh start: deleting it
is exactly what a forger who rewrote the log would do. Failing segments are set aside; a log
that no longer extends a held head holds back every new line. The outcome stays in
`verification.json` until the log verifies again or the problems are accepted on the record
(`bench verify --accept REASON`: an `accept` record in the MANIFEST, covered by the tree; an
acceptance of the snapshot's head names that head).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from warehouse.log import EventLog, ManifestCorrupt, ManifestRecord
from warehouse.merkle import LogHead
from warehouse.paths import BenchPaths
from warehouse.signing import public_key_from
from warehouse.verify import Problem, VerifyReport, head_extension_problems, verify_log

TRUSTED_STATUSES = ("ok", "accepted")
NOT_EXTENDED = "does not extend head"
HEADS_MISSING = "heads missing"


class LogVerificationFailed(RuntimeError):
    """The log did not verify: printed with its problems, non-zero exit."""

    def __init__(self, report: VerifyReport, action: str):
        self.report = report
        lines = [str(p) for p in report.problems[:10]]
        more = len(report.problems) - len(lines)
        if more > 0:
            lines.append(f"... and {more} more (bench verify)")
        segments = sorted(report.failed_segments)
        set_aside = f"; segments set aside, not loaded: {', '.join(segments)}" if segments else ""
        super().__init__(
            f"{action}: the log failed verification{set_aside}\n  "
            + "\n  ".join(lines)
            + "\n"
            + next_step(report)
        )


def next_step(report: VerifyReport) -> str:
    """What to do about a failed verification, for people."""
    rewritten = any(p.kind == NOT_EXTENDED for p in report.problems)
    heads_gone = any(p.kind == HEADS_MISSING for p in report.problems)
    if not (rewritten or heads_gone):
        return (
            "Inspect with `bench verify`; if the change is known and fine, record it with "
            "`bench verify --accept REASON`."
        )
    what = []
    if rewritten:
        what.append(
            "The log does not extend a head this data root vouched for (heads.jsonl, the "
            "serving snapshot): what that head covered was rewritten or removed."
        )
    if heads_gone:
        what.append(
            "heads.jsonl, the record of the heads this data root vouched for, was deleted or "
            "emptied, though the snapshot was published from one."
        )
    return " ".join(what) + (
        " Until this is settled ingest loads no new line, rebuild is refused and the snapshot "
        "keeps what it had. Either restore the log and heads.jsonl from a copy (the log must "
        "extend the snapshot's head), or, if the change is known and fine, record it: "
        '`bench verify --accept "REASON"` (who checked what, and why).'
    )


# --- heads.jsonl ------------------------------------------------------------------------------


def recorded_heads(paths: BenchPaths) -> list[dict[str, Any]]:
    if not paths.heads_file.exists():
        return []
    heads = []
    for line in paths.heads_file.read_text(encoding="utf-8").splitlines():
        try:
            heads.append(json.loads(line))
        except ValueError:
            continue  # a torn last line: the earlier heads still stand
    return heads


def last_trusted_head(paths: BenchPaths) -> LogHead | None:
    heads = recorded_heads(paths)
    return _head_from_json(heads[-1]) if heads else None


def record_head(paths: BenchPaths, head: LogHead, source: str) -> None:
    if last_trusted_head(paths) == head:
        return
    paths.home.mkdir(parents=True, exist_ok=True)
    record = {**head.to_json(), "source": source, "at": datetime.now(UTC).isoformat()}
    with open(paths.heads_file, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _head_from_json(head: dict[str, Any]) -> LogHead:
    return LogHead(int(head["size"]), str(head["root"]), int(head.get("events", 0)))


# --- the snapshot's head ----------------------------------------------------------------------


class SnapshotUnreadable(ValueError):
    """serve.duckdb exists but its publish metadata cannot be read."""


@dataclass(frozen=True)
class SnapshotHead:
    head: LogHead | None
    # Whether the data root trusted `head` when it published (then every later log must extend
    # it). Snapshots published before `log_head_trusted` existed recorded the log's current
    # head even when verification had failed: those bind only if their verification passed.
    trusted: bool
    published_at: str | None


def snapshot_head(serve_db: Path) -> SnapshotHead | None:
    """The log head the serving snapshot records; None when there is no snapshot."""
    import duckdb

    if not serve_db.exists():
        return None
    try:
        with duckdb.connect(str(serve_db), read_only=True) as con:
            row = con.execute(
                "select published_at, metadata from main._publish order by published_at desc limit 1"
            ).fetchone()
    except duckdb.Error as exc:
        raise SnapshotUnreadable(
            f"{serve_db}: its publish metadata cannot be read ({exc})"
        ) from exc
    if row is None:
        return SnapshotHead(None, False, None)
    metadata = json.loads(row[1])
    head = metadata.get("log_head")
    status = (metadata.get("log_verification") or {}).get("status")
    trusted = bool(metadata.get("log_head_trusted")) or status in TRUSTED_STATUSES
    return SnapshotHead(_head_from_json(head) if head else None, trusted, row[0])


def _acceptance_covers(records: list[ManifestRecord], snapshot: str, head: LogHead) -> bool:
    """Whether an `accept` record in the log accepted that it no longer extends this very
    snapshot head (acceptances name the head; an older acceptance never covers a newer one)."""
    return any(
        problem.get("segment") == snapshot
        and problem.get("kind") == NOT_EXTENDED
        and problem.get("head") == str(head)
        for record in records
        if record.op == "accept"
        for problem in record.record.get("problems", [])
    )


def _held_head_problems(
    paths: BenchPaths, records: list[ManifestRecord]
) -> tuple[list[Problem], list[Problem]]:
    """(problems, accepted problems) of the log against the snapshot's head, and a missing
    heads.jsonl beside a snapshot."""
    heads_name, snapshot_name = paths.heads_file.name, paths.serve_db.name
    no_heads = last_trusted_head(paths) is None
    try:
        snapshot = snapshot_head(paths.serve_db)
    except SnapshotUnreadable as exc:
        if not no_heads:
            return [], []  # heads.jsonl still holds the line; the snapshot is rebuilt anyway
        detail = (
            f"{paths.heads_file} is missing and the snapshot's head cannot be read ({exc}): "
            "nothing says which log this data root vouched for"
        )
        return [Problem(heads_name, None, HEADS_MISSING, detail)], []
    if snapshot is None or snapshot.head is None or not snapshot.trusted:
        return [], []
    problems: list[Problem] = []
    accepted: list[Problem] = []
    if no_heads:
        detail = (
            f"{paths.heads_file} is missing or holds no head, but the snapshot "
            f"{paths.serve_db} was published from log head {snapshot.head}: this data root is "
            "not new, the record of the heads it vouched for was deleted"
        )
        problems.append(Problem(heads_name, None, HEADS_MISSING, detail))
    what = f"the snapshot's log head (published {snapshot.published_at})"
    for problem in head_extension_problems(records, snapshot.head, what):
        moved = Problem(snapshot_name, None, problem.kind, problem.detail)
        covered = _acceptance_covers(records, snapshot_name, snapshot.head)
        (accepted if covered else problems).append(moved)
    return problems, accepted


# --- verification -----------------------------------------------------------------------------


def verify_trusted(
    paths: BenchPaths, *, fast: bool, public_key, since: LogHead | None = None
) -> VerifyReport:
    """The whole log against every head this data root holds: `since` (default: the last
    head in heads.jsonl), the snapshot's head, and signed heads when `public_key` is given."""
    log = EventLog(paths.log_dir)
    report = verify_log(
        log,
        since=since if since is not None else last_trusted_head(paths),
        public_key=public_key,
        fast=fast,
    )
    try:
        records = log.manifest_records()
    except ManifestCorrupt:
        return report  # already a problem of the report
    problems, accepted = _held_head_problems(paths, records)
    report.problems.extend(problems)
    report.accepted.extend(accepted)
    return report


def check_log(
    paths: BenchPaths, *, fast: bool = True, since: LogHead | None = None
) -> VerifyReport:
    """Verify against every held head (`verify_trusted`) and save the outcome. An intact
    log's head becomes the new trusted head."""
    report = verify_trusted(paths, fast=fast, public_key=public_key_from(None), since=since)
    save_verification(paths, report)
    if report.intact and report.head is not None:
        record_head(paths, report.head, "verified")
    return report


def save_verification(paths: BenchPaths, report: VerifyReport) -> None:
    status = "failed" if report.problems else ("accepted" if report.accepted else "ok")
    document = {
        "status": status,
        "checked_at": datetime.now(UTC).isoformat(),
        "head": report.head.to_json() if report.head else None,
        "problems": [p.to_json() for p in report.problems],
        "accepted": [p.to_json() for p in report.accepted],
        "segments_set_aside": sorted(report.failed_segments),
    }
    paths.home.mkdir(parents=True, exist_ok=True)
    tmp = paths.verification_file.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(document, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp, paths.verification_file)


def load_verification(paths: BenchPaths) -> dict[str, Any] | None:
    try:
        return json.loads(paths.verification_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def accept(paths: BenchPaths, reason: str) -> tuple[VerifyReport, LogHead]:
    """Record an acceptance of the current problems; the log's head becomes trusted. A log
    that no longer extends the snapshot's head is accepted for that head by name."""
    log = EventLog(paths.log_dir)
    report = verify_trusted(paths, fast=False, public_key=public_key_from(None))
    if not report.problems:
        raise ValueError("the log verifies: there is nothing to accept")
    snapshot = _readable_snapshot_head(paths)
    entries = []
    for problem in report.problems:
        entry = problem.to_json()
        if problem.segment == paths.serve_db.name and snapshot and snapshot.head:
            entry["head"] = str(snapshot.head)
        entries.append(entry)
    head = log.record_acceptance(entries, reason)
    record_head(paths, head, "accepted")
    after = check_log(paths, fast=False)
    return after, head


def _readable_snapshot_head(paths: BenchPaths) -> SnapshotHead | None:
    try:
        return snapshot_head(paths.serve_db)
    except SnapshotUnreadable:
        return None


# --- publishing -------------------------------------------------------------------------------


def head_to_publish(
    paths: BenchPaths, verification: dict[str, Any] | None
) -> tuple[LogHead | None, bool]:
    """(the head a new snapshot holds, whether it is the log's current head).

    The current head only when the last verification passed (or was accepted) and the log
    still extends the verified head and every held head: it may have been rewritten since.
    Otherwise the head the data root already held is carried forward, so publishing a failing
    or rewritten log never replaces a held head with a forged one."""
    log = EventLog(paths.log_dir)
    snapshot = _readable_snapshot_head(paths)
    trusted = last_trusted_head(paths)
    carried = trusted
    try:
        records = log.manifest_records()
    except ManifestCorrupt:
        records = None
    if snapshot is not None and snapshot.head is not None and snapshot.trusted:
        superseded = records is not None and _acceptance_covers(
            records, paths.serve_db.name, snapshot.head
        )
        if not superseded:
            carried = snapshot.head
    verification = verification or {}
    if records is None or verification.get("status") not in TRUSTED_STATUSES:
        return carried, False
    verified = verification.get("head")
    held = [h for h in (_head_from_json(verified) if verified else None, trusted) if h]
    problems, _ = _held_head_problems(paths, records)
    if verified and not problems and not any(head_extension_problems(records, h, "") for h in held):
        return log.head(records), True
    return carried, False
