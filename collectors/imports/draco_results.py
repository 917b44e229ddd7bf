"""`bench import draco-results`: another harness's DRACO results as events of import runs.

A file becomes up to two runs over the pinned DRACO tasks (every task and criterion registered,
as a DRACO run does), each with its own `imported_file_registered` (name, sha256, format, the
file's own header and per-item figures, unmatched / absent / duplicate ids):

* a **grading** run (`kind=grading`) when the file holds verdicts: one `imported_verdict` per
  (item, criterion, judge run), filed under the imported regime `imported:<format>:<judge>`
  (the file's judge model, or `--judge-label`), labelled "imported, not judged here". Its runs
  declare no judge regime of ours, so the DRACO marts of our judges never see these verdicts;
  the `*_imported_*` marts score them the file's way and put the file's own figures beside.
* an **inference** run (`kind=inference`) when the file holds reports (Valyu inference JSONL,
  Nimble records with `answer`): `research_completed` + our `report_normalized` per item, so
  `bench rejudge <run>` judges them under a regime of ours (shown beside the imported one in
  `draco_regime_comparison`). A dataset task the file has no report for, or one the file
  records as an error, is `research_failed` (scored 0, never dropped from the denominator).

Run ids derive from the kind, format, system, judge label, dataset and file sha256: importing
the same file again is a no-op reported as already imported.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collectors.draco.dataset import dataset_ref, registration_payloads
from collectors.draco.model import RubricTaskSet
from collectors.draco.normalize import NORMALIZER
from collectors.imports.draco_formats import FORMATS, ParsedResults, parse_draco_results
from collectors.imports.source_file import ImportFormatError, SourceFile, read_source
from collectors.runs.one_shot import closed_run_events, has_finished
from warehouse.canonical import canonical_sha256, sha256_hex
from warehouse.events import (
    IMPORTED_REGIME_LABEL,
    ImportedFileRegistered,
    ImportedItemFigure,
    ImportedVerdict,
    Payload,
    ResearchCompleted,
    ResearchFailed,
    RunStarted,
    SystemRef,
    utc_now_iso,
)
from warehouse.ids import event_id_for, run_id_for
from warehouse.log import EventLog

MISSING_IN_FILE = "missing_in_import"
IMPORTED_ERROR = "imported_error"
EMPTY_OUTPUT = "empty_output"


@dataclass
class ImportSummary:
    run_id: str
    kind: str
    lane: str
    judge_id: str | None
    file_name: str
    file_sha256: str
    items_in_file: int
    completed: int
    failed: int
    unmatched_ids: list[str] = field(default_factory=list)
    absent_ids: list[str] = field(default_factory=list)
    duplicate_ids: list[str] = field(default_factory=list)
    header: dict[str, Any] = field(default_factory=dict)
    already_imported: bool = False


def imported_judge_id(fmt: str, judge_model: str | None, judge_label: str | None) -> str:
    """One regime per (harness format, judge): files of one harness and judge rank together."""
    label = judge_label or judge_model
    if not label:
        raise ImportFormatError(
            f"the {fmt} format does not name its judge model: pass --judge-label"
        )
    return f"imported:{fmt}:{label}"


def import_draco_results(
    log: EventLog,
    file: Path,
    *,
    fmt: str,
    system: str,
    task_set: RubricTaskSet,
    judge_label: str | None = None,
    argv: list[str] | tuple[str, ...] = (),
) -> list[ImportSummary]:
    """Validate the whole file, then append its runs; returns one summary per run."""
    if fmt not in FORMATS:
        raise ImportFormatError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if not system.strip():
        raise ImportFormatError(f"{file}: a system name is required (--system)")
    clock = time.monotonic()
    source = read_source(file)
    tasks = {task.item_id: task for task in task_set.tasks}
    parsed = parse_draco_results(source, fmt, tasks)
    if not parsed.items and not parsed.inference:
        raise ImportFormatError(
            f"{source.path}: no record matches a task of {task_set.name} "
            f"(unmatched ids: {', '.join(parsed.unmatched_ids[:5]) or 'none'})"
        )
    batches: list[tuple[ImportSummary, list[Payload], dict[str, Any]]] = []
    if parsed.items:
        batches.append(_grading_batch(source, parsed, system, task_set, judge_label, argv))
    if parsed.inference:
        batches.append(_inference_batch(source, parsed, system, task_set, argv))
    summaries = []
    with log.writer() as writer:
        for summary, payloads, spec in batches:
            if has_finished(log, summary.run_id):
                summary.already_imported = True
            else:
                writer.append(
                    closed_run_events(
                        payloads,
                        run_id=summary.run_id,
                        spec=spec,
                        completed=summary.completed,
                        failed=summary.failed,
                        started=clock,
                    )
                )
            summaries.append(summary)
    return summaries


def _run_start(
    kind: str,
    source: SourceFile,
    parsed: ParsedResults,
    system: str,
    task_set: RubricTaskSet,
    argv,
    extra: dict[str, Any],
) -> tuple[str, RunStarted, dict[str, Any]]:
    system_ref = SystemRef(
        name=system,
        version="imported",
        settings={"file": source.name, "file_sha256": source.sha256, "format": parsed.format},
    )
    spec = {
        "benchmark": "draco",
        "source": "import",
        "kind": kind,
        "format": parsed.format,
        "dataset_sha256": task_set.sha256,
        "item_ids": [task.item_id for task in task_set.tasks],
        "systems": [system_ref.model_dump(mode="json")],
        "file_name": source.name,
        "file_sha256": source.sha256,
        **extra,
    }
    spec_sha256 = canonical_sha256(spec)
    started = RunStarted(
        benchmark="draco",
        source="import",
        spec=spec,
        spec_sha256=spec_sha256,
        dataset=dataset_ref(task_set),
        systems=[system_ref],
        argv=list(argv),
    )
    return run_id_for(spec_sha256), started, spec


def _file_event(
    kind: str,
    source: SourceFile,
    parsed: ParsedResults,
    system: str,
    absent: list[str],
    figures: list[ImportedItemFigure],
    judge_id: str | None,
) -> ImportedFileRegistered:
    return ImportedFileRegistered(
        benchmark="draco",
        kind=kind,  # type: ignore[arg-type]
        format=parsed.format,
        lane=system,
        judge_id=judge_id,
        judge_model=parsed.judge_model,
        judge_label=IMPORTED_REGIME_LABEL,
        file_name=source.name,
        file_sha256=source.sha256,
        file_bytes=len(source.data),
        header=parsed.header,
        item_figures=figures,
        unmatched_ids=parsed.unmatched_ids,
        absent_ids=absent,
        duplicate_ids=parsed.duplicate_ids,
    )


def _grading_batch(source, parsed: ParsedResults, system, task_set, judge_label, argv):
    judge_id = imported_judge_id(parsed.format, parsed.judge_model, judge_label)
    run_id, started, spec = _run_start(
        "grading", source, parsed, system, task_set, argv, {"judge_id": judge_id}
    )
    graded = {item.item_id for item in parsed.items}
    absent = [task.item_id for task in task_set.tasks if task.item_id not in graded]
    file_event = _file_event(
        "grading", source, parsed, system, absent, [i.figure for i in parsed.items], judge_id
    )
    file_event_id = event_id_for(file_event.event_type, run_id, *file_event.natural_key_values())
    payloads: list[Payload] = [started, *registration_payloads(task_set), file_event]
    failed = 0
    for item in parsed.items:
        if not item.runs:
            failed += 1
        for run_index, verdicts in enumerate(item.runs, start=1):
            payloads.extend(
                ImportedVerdict(
                    lane=system,
                    item_id=item.item_id,
                    judge_id=judge_id,
                    criterion_id=v.criterion.criterion_id,
                    criterion_position=v.criterion.position,
                    run_index=run_index,
                    verdict=v.verdict,
                    met_rate=v.met_rate,
                    samples=v.samples,
                    justification=v.justification,
                    source_event_id=file_event_id,
                )
                for v in verdicts
            )
    summary = ImportSummary(
        run_id=run_id,
        kind="grading",
        lane=system,
        judge_id=judge_id,
        file_name=source.name,
        file_sha256=source.sha256,
        items_in_file=len(parsed.items),
        completed=len(parsed.items) - failed,
        failed=failed,
        unmatched_ids=parsed.unmatched_ids,
        absent_ids=absent,
        duplicate_ids=parsed.duplicate_ids,
        header=parsed.header,
    )
    return summary, payloads, spec


def _inference_batch(source, parsed: ParsedResults, system, task_set, argv):
    run_id, started, spec = _run_start("inference", source, parsed, system, task_set, argv, {})
    by_item = {record.item_id: record for record in parsed.inference}
    absent = [task.item_id for task in task_set.tasks if task.item_id not in by_item]
    figures = [
        ImportedItemFigure(item_id=r.item_id, latency_s=r.latency_s, error=r.error)
        for r in parsed.inference
    ]
    file_event = _file_event("inference", source, parsed, system, absent, figures, None)
    file_event_id = event_id_for(file_event.event_type, run_id, *file_event.natural_key_values())
    payloads: list[Payload] = [started, *registration_payloads(task_set), file_event]
    imported_at = utc_now_iso()
    completed = failed = 0
    for task in task_set.tasks:
        record = by_item.get(task.item_id)
        provider = (record.provider if record else None) or system
        if record is None or record.error or not (record.output or "").strip():
            error_class = (
                MISSING_IN_FILE
                if record is None
                else IMPORTED_ERROR
                if record.error
                else EMPTY_OUTPUT
            )
            message = (
                f"{source.name} has no record for this task"
                if record is None
                else record.error or f"{source.name} records an empty output"
            )
            payloads.append(
                ResearchFailed(
                    lane=system,
                    provider=provider,
                    item_id=task.item_id,
                    attempt=1,
                    stage="result",
                    error_class=error_class,
                    error_message=message,
                    wall_clock_ms=record.latency_s * 1000 if record and record.latency_s else None,
                    source_event_ids=[file_event_id],
                )
            )
            failed += 1
            continue
        research = ResearchCompleted(
            lane=system,
            provider=provider,
            item_id=task.item_id,
            attempt=1,
            raw_output=record.output or "",
            raw_citations=record.citations,
            # The harness sent the task's problem verbatim; we never saw the request.
            instruction_sha256=sha256_hex(task.problem),
            submitted_at=imported_at,
            finished_at=imported_at,
            wall_clock_ms=(record.latency_s or 0.0) * 1000,
            cost_usd=record.cost_usd,
            cost_basis="imported" if record.cost_usd is not None else None,
            usage={"model": record.model} if record.model else {},
            source_event_ids=[file_event_id],
        )
        research_id = event_id_for(research.event_type, run_id, *research.natural_key_values())
        payloads.append(research)
        payloads.append(
            NORMALIZER(
                system, task.item_id, 1, research_id, research.raw_output, research.raw_citations
            )
        )
        completed += 1
    summary = ImportSummary(
        run_id=run_id,
        kind="inference",
        lane=system,
        judge_id=None,
        file_name=source.name,
        file_sha256=source.sha256,
        items_in_file=len(parsed.inference),
        completed=completed,
        failed=failed,
        unmatched_ids=parsed.unmatched_ids,
        absent_ids=absent,
        duplicate_ids=parsed.duplicate_ids,
    )
    return summary, payloads, spec
