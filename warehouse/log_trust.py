"""What this data root believes about its log: the heads it vouched for, the last verification.

Ingest, rebuild and publish verify the log against the last head recorded here (and the public
key, when one is configured), set aside failing segments, and keep the outcome in
`verification.json` until the log verifies again or the problems are accepted on the record
(`bench verify --accept REASON`, an `accept` record in the MANIFEST, covered by the tree).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any

from warehouse.log import EventLog
from warehouse.merkle import LogHead
from warehouse.paths import BenchPaths
from warehouse.signing import public_key_from
from warehouse.verify import VerifyReport, verify_log


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
            + "\nInspect with `bench verify`; if the change is known and fine, record it with "
            "`bench verify --accept REASON`."
        )


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
    if not heads:
        return None
    last = heads[-1]
    return LogHead(int(last["size"]), str(last["root"]), int(last.get("events", 0)))


def record_head(paths: BenchPaths, head: LogHead, source: str) -> None:
    if last_trusted_head(paths) == head:
        return
    paths.home.mkdir(parents=True, exist_ok=True)
    record = {**head.to_json(), "source": source, "at": datetime.now(UTC).isoformat()}
    with open(paths.heads_file, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def check_log(
    paths: BenchPaths, *, fast: bool = True, since: LogHead | None = None
) -> VerifyReport:
    """Verify against `since` (default: the last head this data root vouched for) and save
    the outcome. An intact log's head becomes the new trusted head."""
    log = EventLog(paths.log_dir)
    report = verify_log(
        log,
        since=since if since is not None else last_trusted_head(paths),
        public_key=public_key_from(None),
        fast=fast,
    )
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
    """Record an acceptance of the current problems; the log's head becomes trusted."""
    log = EventLog(paths.log_dir)
    report = verify_log(log, since=last_trusted_head(paths), public_key=public_key_from(None))
    if not report.problems:
        raise ValueError("the log verifies: there is nothing to accept")
    head = log.record_acceptance([p.to_json() for p in report.problems], reason)
    record_head(paths, head, "accepted")
    after = check_log(paths, fast=False)
    return after, head
