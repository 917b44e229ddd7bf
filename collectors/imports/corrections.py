"""Correction events: `item_excluded` and `verdict_superseded`, from the CLI or a file.

A correction never edits the log: it is a new fact with a reason and provenance, checked
against the log before it is appended (the item must be registered in the family; the
superseded event must exist and be a verdict of the stated kind), so a typo is an error, not
a silent no-op. Envelopes go under the corrected run (`scope_run_id`, or the superseded
event's run); an unscoped exclusion goes under a corrections pseudo-run of (family, dataset).

The corrections file (`bench import corrections FILE`, docs/imports.md) is a CSV with header
`kind,target,reason` plus optional `benchmark,replacement,run_id,dataset_sha256,reinstate`:
`kind` = exclude | supersede; `target` = the item id (exclude) or the event id (supersede).
"""

from __future__ import annotations

import csv
import getpass
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from collectors.imports.source_file import (
    FileProblems,
    ImportFormatError,
    problem_text,
    read_source,
)
from warehouse.events import (
    CorrectionProvenance,
    ItemExcluded,
    Payload,
    VerdictSuperseded,
    make_event,
)
from warehouse.ids import derive_id
from warehouse.log import EventLog
from warehouse.provenance import producer_for

REGISTRATIONS = {
    "draco": "rubric_task_registered",
    "qa": "question_registered",
    "extraction": "item_registered",
}
VERDICT_REPLACEMENTS = {
    "judge_verdict": ("MET", "UNMET"),
    "imported_verdict": ("MET", "UNMET"),
    "answer_graded": ("A", "B", "C"),
}


class CorrectionError(ValueError):
    """A correction that does not apply to the log (unknown item / event, wrong kind); `field`
    names the corrections file's column at fault."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Correction:
    run_id: str
    payload: Payload


def provenance(source: str, argv: Iterable[str] = (), **file: str) -> CorrectionProvenance:
    try:
        actor = getpass.getuser()
    except (KeyError, OSError):
        actor = None
    return CorrectionProvenance(source=source, actor=actor, argv=list(argv), **file)  # type: ignore[arg-type]


def _index(log: EventLog) -> tuple[dict[tuple[str, str], set[tuple[str, str]]], dict[str, dict]]:
    """(family, item) -> {(run_id, dataset_sha256)}, and verdict event id -> event."""
    items: dict[tuple[str, str], set[tuple[str, str]]] = {}
    verdicts: dict[str, dict] = {}
    families = {event_type: family for family, event_type in REGISTRATIONS.items()}
    for _raw, event in log.read():
        kind = event["event_type"]
        if kind in families:
            payload = event["payload"]
            items.setdefault((families[kind], payload["item_id"]), set()).add(
                (event["run_id"], payload.get("dataset_sha256") or "")
            )
        elif kind in VERDICT_REPLACEMENTS:
            verdicts[event["event_id"]] = event
    return items, verdicts


def exclusion(
    index: dict[tuple[str, str], set[tuple[str, str]]],
    *,
    benchmark: str,
    item_id: str,
    reason: str,
    provenance: CorrectionProvenance,
    scope_run_id: str | None = None,
    dataset_sha256: str | None = None,
    reinstate: bool = False,
) -> Correction:
    if benchmark not in REGISTRATIONS:
        raise CorrectionError(
            f"benchmark {benchmark!r}: expected one of {', '.join(REGISTRATIONS)}",
            "benchmark",
        )
    if not reason.strip():
        raise CorrectionError("a correction needs a reason", "reason")
    seen = index.get((benchmark, item_id))
    if not seen:
        raise CorrectionError(
            f"item {item_id!r} is not registered in any {benchmark} run", "target"
        )
    if scope_run_id is not None:
        seen = {(run, sha) for run, sha in seen if run == scope_run_id}
        if not seen:
            raise CorrectionError(
                f"item {item_id!r} is not registered in run {scope_run_id!r}", "run_id"
            )
    shas = {sha for _run, sha in seen}
    if dataset_sha256 is None:
        if len(shas) != 1:
            raise CorrectionError(
                f"item {item_id!r} is registered over {len(shas)} datasets; pass --dataset-sha256",
                "dataset_sha256",
            )
        (dataset_sha256,) = shas
    elif dataset_sha256 not in shas:
        raise CorrectionError(
            f"item {item_id!r} is not registered over dataset {dataset_sha256}", "dataset_sha256"
        )
    payload = ItemExcluded(
        benchmark=benchmark,  # type: ignore[arg-type]
        dataset_sha256=dataset_sha256,
        item_id=item_id,
        scope_run_id=scope_run_id,
        excluded=not reinstate,
        reason=reason.strip(),
        provenance=provenance,
    )
    run_id = scope_run_id or derive_id("corrections", benchmark, dataset_sha256)
    return Correction(run_id, payload)


def supersession(
    verdicts: dict[str, dict],
    *,
    event_id: str,
    replacement: str,
    reason: str,
    provenance: CorrectionProvenance,
) -> Correction:
    event = verdicts.get(event_id)
    if event is None:
        raise CorrectionError(
            f"event {event_id!r} is no judge_verdict, imported_verdict or answer_graded in the log",
            "target",
        )
    kind = event["event_type"]
    allowed = VERDICT_REPLACEMENTS[kind]
    replacement = replacement.strip().upper()
    if replacement not in allowed:
        raise CorrectionError(
            f"a {kind} is replaced by one of {', '.join(allowed)}, not {replacement!r}",
            "replacement",
        )
    if not reason.strip():
        raise CorrectionError("a correction needs a reason", "reason")
    payload = VerdictSuperseded(
        superseded_event_id=event_id,
        superseded_event_type=kind,  # type: ignore[arg-type]
        replacement=replacement,  # type: ignore[arg-type]
        reason=reason.strip(),
        provenance=provenance,
    )
    return Correction(event["run_id"], payload)


def append_corrections(log: EventLog, corrections: list[Correction]) -> int:
    """Append every correction in one write; returns how many were new (repeats are no-ops)."""
    if not corrections:
        return 0
    known = log.known_event_ids()
    events = []
    for c in corrections:
        envelope = make_event(
            c.payload, run_id=c.run_id, producer=producer_for({"correction": c.payload.event_type})
        )
        if envelope.event_id not in known:
            events.append(envelope)
    with log.writer() as writer:
        writer.append(events)
    return len(events)


def exclude_items(log: EventLog, item_ids: list[str], **options) -> list[Correction]:
    items, _verdicts = _index(log)
    return [exclusion(items, item_id=item_id, **options) for item_id in item_ids]


def supersede_verdicts(log: EventLog, event_ids: list[str], **options) -> list[Correction]:
    _items, verdicts = _index(log)
    return [supersession(verdicts, event_id=e, **options) for e in event_ids]


def parse_corrections_file(log: EventLog, path: Path, argv: Iterable[str] = ()) -> list[Correction]:
    """Every row of a corrections CSV, validated against the log before anything is written."""
    source = read_source(path)
    reader = csv.DictReader(io.StringIO(source.text(), newline=""))
    columns = reader.fieldnames or []
    missing = [c for c in ("kind", "target", "reason") if c not in columns]
    if missing:
        raise ImportFormatError(
            problem_text(source.path, 1, None, f"missing column(s) {missing} in the header")
        )
    items, verdicts = _index(log)
    made = provenance("import", argv, file_name=source.name, file_sha256=source.sha256)
    corrections = []
    problems = FileProblems(source.path)  # every bad line at once, nothing written
    line = reader.line_num + 1  # the header is line 1; a quoted cell may span lines
    for row in reader:
        here, line = line, reader.line_num + 1
        kind = (row.get("kind") or "").strip()
        try:
            if kind == "exclude":
                corrections.append(
                    exclusion(
                        items,
                        benchmark=(row.get("benchmark") or "").strip(),
                        item_id=(row.get("target") or "").strip(),
                        reason=row.get("reason") or "",
                        provenance=made,
                        scope_run_id=(row.get("run_id") or "").strip() or None,
                        dataset_sha256=(row.get("dataset_sha256") or "").strip() or None,
                        reinstate=(row.get("reinstate") or "").strip().lower()
                        in ("1", "true", "yes"),
                    )
                )
            elif kind == "supersede":
                corrections.append(
                    supersession(
                        verdicts,
                        event_id=(row.get("target") or "").strip(),
                        replacement=row.get("replacement") or "",
                        reason=row.get("reason") or "",
                        provenance=made,
                    )
                )
            else:
                raise CorrectionError(f"kind {kind!r}: expected exclude or supersede", "kind")
        except CorrectionError as exc:
            problems.add(here, exc.field, str(exc))
    problems.check()
    return corrections
