"""`bench import qa-results`: another harness's SimpleQA rows as events of one import run.

Formats (docs/imports.md):

* **nimble** — the Nimble SimpleQA harness's `dataset_simpleqa_raw_results_<lane>.csv` (one row
  per question: `query, ground_truth, generated_answer, evaluation_result` (`is_correct |
  is_incorrect | is_not_attempted | not_evaluated`), `predicted_urls`, `chunks_json`,
  `request_status`, `request_error`, `request_response_time_ms`, `topic`, `answer_type`, ...);
* **simple-evals** — openai/simple-evals' `<eval>_allresults.json`: `score`, `metrics`, `convos`
  (one conversation per question: the user turn is the problem, the last assistant turn the
  answer) and `metadata.example_level_metadata` (per-question grade: `grade` A/B/C, or
  `is_correct` / `is_incorrect` / `is_not_attempted`); the stock SimpleQA eval keeps per-row
  grades only in its HTML, so a file without them is refused;
* **csv** — the long format: `question, answer, grade[, urls, latency_ms]` (grade A/B/C or
  correct / incorrect / not_attempted).

Rows join SimpleQA questions **by question text** (exact after trimming, else with whitespace
collapsed and case folded), keeping the upstream row identity (row position + problem hash);
a text that several rows share goes to the first such row not already taken. A row that
matches no question is reported in `unmatched_ids` (its 1-based record number and text).
Stored grades are their own grader regime `imported:<format>:<grader label>`, never ours.

What a row retrieved is recorded the way our lanes record a search (as `local-bm25` does): a
`provider_call_completed` (stage "search", provider "imported", the request naming the file and
record, the raw body the row's chunks as imported, no round trip: the file's latency stays in
its item figures), then the `chunks_normalized` derived from it. The same dbt models then score
the imported URLs with the same URL metrics (NDCG, recall, hit, MRR) as our lanes', and our
roles can re-synthesise and re-grade the stored chunks (`collectors.imports.qa_regrade`).
"""

from __future__ import annotations

import csv
import io
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collectors.imports.draco_results import ImportSummary, imported_judge_id
from collectors.imports.source_file import ImportFormatError, SourceFile, kind, read_source
from collectors.qa.dataset import QaDataset, QaQuestion
from collectors.runs.one_shot import closed_run_events, has_finished
from warehouse import bounded_json
from warehouse.canonical import canonical_json, canonical_sha256
from warehouse.events import (
    IMPORTED_REGIME_LABEL,
    AnswerGraded,
    AnswerSynthesized,
    CallTimings,
    Chunk,
    ChunksNormalized,
    ImportedFileRegistered,
    ImportedItemFigure,
    Payload,
    ProviderCallCompleted,
    QuestionRegistered,
    RecordedRequest,
    RunStarted,
    SystemRef,
)
from warehouse.ids import event_id_for, run_id_for
from warehouse.log import EventLog

QA_FORMATS = ("nimble", "simple-evals", "csv")
IMPORTED_PROVIDER = "imported"
IMPORTED_NORMALIZER = "imported:{fmt}"
GRADES = {
    "a": "A",
    "b": "B",
    "c": "C",
    "correct": "A",
    "incorrect": "B",
    "not_attempted": "C",
    "is_correct": "A",
    "is_incorrect": "B",
    "is_not_attempted": "C",
}
LABELS = {"A": "correct", "B": "incorrect", "C": "not_attempted"}


@dataclass
class QaRow:
    record: int  # 1-based record number in the file
    question: str
    answer: str | None
    grade: str | None  # A | B | C, None = not graded
    landed: bool = True
    error: str | None = None
    chunks: list[Chunk] = field(default_factory=list)
    latency_s: float | None = None


@dataclass
class ParsedQa:
    format: str
    rows: list[QaRow]
    header: dict[str, Any] = field(default_factory=dict)
    grader_model: str | None = None
    # The file records what each row retrieved (URLs, chunks): its rows are scored by the URL
    # metrics like our lanes'. A file without (simple-evals) is a lane without retrieval.
    carries_urls: bool = True


def _grade(value: Any, source: SourceFile, where: str, *, allow_none: bool = False) -> str | None:
    text = str(value).strip().lower() if value is not None else ""
    if text in GRADES:
        return GRADES[text]
    if allow_none and text in ("", "not_evaluated"):
        return None
    raise source.error(
        where, f"expected a grade A/B/C or correct/incorrect/not_attempted, got {kind(value)}"
    )


def _nimble_chunks(value: str | None, source: SourceFile, where: str) -> list[Chunk]:
    if not value:
        return []
    try:
        items = bounded_json.loads(value)
    except json.JSONDecodeError as exc:
        raise source.error(where, f"not valid JSON ({exc.msg})") from None
    if not isinstance(items, list):
        raise source.error(where, f"expected a JSON list of chunks, got {kind(items)}")
    chunks = []
    for rank, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise source.error(f"{where}[{rank - 1}]", f"expected an object, got {kind(item)}")
        text = next(
            (item[k] for k in ("text", "description", "content", "snippet") if item.get(k)), ""
        )
        chunks.append(
            Chunk(
                rank=rank,
                url=str(item.get("url") or ""),
                title=str(item.get("title") or ""),
                text=str(text),
            )
        )
    return chunks


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def _nimble(source: SourceFile) -> ParsedQa:
    reader = csv.DictReader(io.StringIO(source.text(), newline=""))
    required = ("query", "generated_answer", "evaluation_result")
    missing = [c for c in required if c not in (reader.fieldnames or [])]
    if missing:
        raise source.error("header", f"missing column(s) {missing}")
    rows = []
    for number, row in enumerate(reader, start=1):
        where = f"row {number}"
        status = (row.get("request_status") or "ok").strip()
        latency = _float(row.get("request_response_time_ms"))
        rows.append(
            QaRow(
                record=number,
                question=row["query"],
                answer=row.get("generated_answer") or "",
                grade=_grade(
                    row.get("evaluation_result"),
                    source,
                    f"{where}.evaluation_result",
                    allow_none=True,
                ),
                landed=status == "ok",
                error=(row.get("request_error") or None) if status != "ok" else None,
                chunks=_nimble_chunks(row.get("chunks_json"), source, f"{where}.chunks_json"),
                latency_s=latency / 1000 if latency is not None else None,
            )
        )
    return ParsedQa(format="nimble", rows=rows)


def _simple_evals(source: SourceFile) -> ParsedQa:
    document = source.json()
    if not isinstance(document, dict):
        raise source.error("(top level)", f"expected a JSON object, got {kind(document)}")
    convos = document.get("convos")
    if not isinstance(convos, list):
        raise source.error("convos", f"expected a list of conversations, got {kind(convos)}")
    metadata = document.get("metadata") or {}
    per_row = metadata.get("example_level_metadata") if isinstance(metadata, dict) else None
    if not isinstance(per_row, list) or len(per_row) != len(convos):
        raise source.error(
            "metadata.example_level_metadata",
            "needs one per-question grade per conversation (simple-evals keeps them only in its "
            "HTML otherwise)",
        )
    rows = []
    for index, (convo, meta) in enumerate(zip(convos, per_row, strict=True)):
        where = f"convos[{index}]"
        if not isinstance(convo, list) or not convo:
            raise source.error(where, f"expected a list of messages, got {kind(convo)}")
        users = [m.get("content") for m in convo if isinstance(m, dict) and m.get("role") == "user"]
        answers = [
            m.get("content") for m in convo if isinstance(m, dict) and m.get("role") == "assistant"
        ]
        if not users or not isinstance(users[0], str):
            raise source.error(where, "no user message with the question")
        meta = meta if isinstance(meta, dict) else {}
        grade_value = meta.get("grade") or next(
            (k for k in ("is_correct", "is_incorrect", "is_not_attempted") if meta.get(k)), None
        )
        rows.append(
            QaRow(
                record=index + 1,
                question=users[0],
                answer=answers[-1] if answers and isinstance(answers[-1], str) else "",
                grade=_grade(grade_value, source, f"metadata.example_level_metadata[{index}]"),
            )
        )
    header = {k: document[k] for k in ("score", "metrics") if k in document}
    return ParsedQa(format="simple-evals", rows=rows, header=header, carries_urls=False)


def _long_csv(source: SourceFile) -> ParsedQa:
    reader = csv.DictReader(io.StringIO(source.text(), newline=""))
    columns = reader.fieldnames or []
    missing = [c for c in ("question", "answer", "grade") if c not in columns]
    if missing:
        raise source.error("header", f"missing column(s) {missing}; expected question,answer,grade")
    rows = []
    for number, row in enumerate(reader, start=1):
        where = f"row {number}"
        urls = [u for u in (row.get("urls") or "").split() if u]
        rows.append(
            QaRow(
                record=number,
                question=row["question"],
                answer=row.get("answer") or "",
                grade=_grade(row.get("grade"), source, f"{where}.grade"),
                chunks=[Chunk(rank=r, url=u, title="", text="") for r, u in enumerate(urls, 1)],
                latency_s=(_float(row.get("latency_ms")) or 0) / 1000
                if row.get("latency_ms")
                else None,
            )
        )
    return ParsedQa(format="csv", rows=rows, carries_urls="urls" in columns)


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def join_questions(
    rows: list[QaRow], questions: tuple[QaQuestion, ...]
) -> tuple[list[tuple[QaRow, QaQuestion]], list[str]]:
    """(row, question) pairs by question text, and the unmatched rows as `#<record>: <text>`."""
    exact: dict[str, list[QaQuestion]] = {}
    folded: dict[str, list[QaQuestion]] = {}
    for question in questions:
        exact.setdefault(question.problem.strip(), []).append(question)
        folded.setdefault(_folded(question.problem), []).append(question)
    taken: set[str] = set()
    joined, unmatched = [], []
    for row in rows:
        candidates = exact.get(row.question.strip()) or folded.get(_folded(row.question)) or []
        free = [q for q in candidates if q.item_id not in taken]
        if not free:
            unmatched.append(f"#{row.record}: {row.question.strip()[:80]}")
            continue
        taken.add(free[0].item_id)
        joined.append((row, free[0]))
    return joined, unmatched


def _retrieval_call(
    row: QaRow, question: QaQuestion, *, lane: str, file_name: str
) -> ProviderCallCompleted:
    """What the row retrieved, as a search call of the imported lane (see the module docstring)."""
    return ProviderCallCompleted(
        lane=lane,
        provider=IMPORTED_PROVIDER,
        stage="search",
        item_id=question.item_id,
        attempt=1,
        request=RecordedRequest(
            method="IMPORT",
            url=f"import://{file_name}#record-{row.record}",
            body={"query": row.question},
        ),
        status_code=200,
        raw_body=canonical_json({"chunks": [c.model_dump(mode="json") for c in row.chunks]}),
        timings=CallTimings(queue_wait_ms=0.0, round_trip_ms=None, whole_call_ms=0.0),
        http_attempts=1,
        concurrency=1,
    )


def import_qa_results(
    log: EventLog,
    file: Path,
    *,
    fmt: str,
    lane: str,
    dataset: QaDataset,
    grader_label: str | None = None,
    argv: list[str] | tuple[str, ...] = (),
) -> ImportSummary:
    if fmt not in QA_FORMATS:
        raise ImportFormatError(f"--format: {fmt!r} is not one of {', '.join(QA_FORMATS)}")
    if not lane.strip():
        raise ImportFormatError(f"{file}: a lane name is required (--lane)")
    clock = time.monotonic()
    source = read_source(file)
    parsed = {"nimble": _nimble, "simple-evals": _simple_evals, "csv": _long_csv}[fmt](source)
    if not parsed.rows:
        raise ImportFormatError(f"{source.path}: no rows")
    joined, unmatched = join_questions(parsed.rows, dataset.questions)
    if not joined:
        raise ImportFormatError(
            f"{source.path}: no row matches a question of {dataset.dataset.name} by text "
            f"(first unmatched: {unmatched[0]})"
        )
    grader_id = imported_judge_id(fmt, parsed.grader_model, grader_label or "unnamed-grader")
    settings: dict[str, Any] = {"file": source.name, "file_sha256": source.sha256, "format": fmt}
    if not parsed.carries_urls:
        settings["search"] = None  # nothing retrieved on record: no retrieval metrics
    system_ref = SystemRef(name=lane, version="imported", settings=settings)
    spec = {
        "benchmark": dataset.benchmark,
        "source": "import",
        "kind": "qa_results",
        "format": fmt,
        "dataset_sha256": dataset.dataset.sha256,
        "systems": [system_ref.model_dump(mode="json")],
        "grader": {"grader_id": grader_id, "official": False, "label": IMPORTED_REGIME_LABEL},
        "file_name": source.name,
        "file_sha256": source.sha256,
    }
    spec_sha256 = canonical_sha256(spec)
    run_id = run_id_for(spec_sha256)
    file_event = ImportedFileRegistered(
        benchmark="simpleqa" if dataset.benchmark == "simpleqa" else "qa",
        kind="qa_results",
        format=fmt,
        lane=lane,
        judge_id=grader_id,
        judge_model=parsed.grader_model,
        file_name=source.name,
        file_sha256=source.sha256,
        file_bytes=len(source.data),
        header=parsed.header,
        item_figures=[
            ImportedItemFigure(
                item_id=question.item_id,
                score=None if row.grade is None else float(row.grade == "A"),
                latency_s=row.latency_s,
                error=row.error,
            )
            for row, question in joined
        ],
        unmatched_ids=unmatched,
    )
    file_event_id = event_id_for(file_event.event_type, run_id, *file_event.natural_key_values())
    payloads: list[Payload] = [
        RunStarted(
            benchmark=dataset.benchmark,  # type: ignore[arg-type]
            source="import",
            spec=spec,
            spec_sha256=spec_sha256,
            dataset=dataset.dataset,
            systems=[system_ref],
            argv=list(argv),
        ),
        file_event,
    ]
    completed = failed = 0
    for order, (row, question) in enumerate(joined):
        payloads.append(
            QuestionRegistered(
                item_id=question.item_id,
                dataset_sha256=dataset.dataset.sha256,
                row_position=question.row_position,
                sample_order=order,
                problem=question.problem,
                gold_answer=question.gold_answer,
                gold_urls_raw=list(question.gold_urls_raw),
                topic=question.topic,
                answer_type=question.answer_type,
            )
        )
        sources = [file_event_id]
        if row.landed and parsed.carries_urls:
            call = _retrieval_call(row, question, lane=lane, file_name=source.name)
            call_id = event_id_for(call.event_type, run_id, *call.natural_key_values())
            chunks = ChunksNormalized(
                lane=lane,
                item_id=question.item_id,
                attempt=1,
                normalizer_version=IMPORTED_NORMALIZER.format(fmt=fmt),
                source_event_id=call_id,
                chunks=row.chunks,
            )
            payloads += [call, chunks]
            sources.append(event_id_for(chunks.event_type, run_id, *chunks.natural_key_values()))
        answered = bool((row.answer or "").strip())
        outcome = (
            "failed"
            if not row.landed
            else "answered"
            if answered
            else "zero_results"
            if not row.chunks
            else "refused"
        )
        answer = AnswerSynthesized(
            lane=lane,
            item_id=question.item_id,
            attempt=1,
            outcome=outcome,
            answer=row.answer if answered else None,
            chunk_ranks_used=[c.rank for c in row.chunks],
            source_event_ids=sources,
        )
        payloads.append(answer)
        if outcome == "failed":
            failed += 1
            continue
        completed += 1
        if row.grade is not None:
            payloads.append(
                AnswerGraded(
                    lane=lane,
                    item_id=question.item_id,
                    attempt=1,
                    grader_id=grader_id,
                    official=False,  # the file's grader: its template/model are not ours to vouch for
                    grade=row.grade,  # type: ignore[arg-type]
                    label=LABELS[row.grade],  # type: ignore[arg-type]
                    outcome="parsed",  # the file's grade, as published
                    parse_ok=True,
                    source_event_id=event_id_for(
                        answer.event_type, run_id, *answer.natural_key_values()
                    ),
                )
            )
    summary = ImportSummary(
        run_id=run_id,
        kind="qa_results",
        lane=lane,
        judge_id=grader_id,
        file_name=source.name,
        file_sha256=source.sha256,
        items_in_file=len(parsed.rows),
        completed=completed,
        failed=failed,
        unmatched_ids=unmatched,
        header=parsed.header,
    )
    if has_finished(log, run_id):
        summary.already_imported = True
        return summary
    events = closed_run_events(
        payloads, run_id=run_id, spec=spec, completed=completed, failed=failed, started=clock
    )
    with log.writer() as writer:
        writer.append(events)
    return summary
