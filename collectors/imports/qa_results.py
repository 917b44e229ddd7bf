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
* **csv** / **jsonl** — one row per question, columns named by `--map` (grade A/B/C or
  correct / incorrect / not_attempted);
* **inspect** — an inspect_ai eval log (`.eval` / `.json`) read by inspect_ai itself
  (`collectors.imports.inspect_log`; the optional extra `bench-warehouse[inspect]`).

Rows join SimpleQA questions **by question text** (exact after trimming, else with whitespace
collapsed and case folded), keeping the upstream row identity (row position + problem hash);
a text that several rows share goes to the first such row not already taken. A row that
matches no question is reported in `unmatched_ids` (its 1-based record number and text).
Stored grades are their own grader regime `imported:<format>:<grader label>`, never ours.

What a row retrieved is recorded the way our lanes record a search (as `local-bm25` does): a
`provider_call_completed` (stage "search", provider "imported", the request naming the file and
record, the raw body the row's chunks as imported, no round trip: the file's latency and cost stay in
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
from collectors.imports.source_file import (
    FileProblems,
    ImportFormatError,
    SourceFile,
    kind,
    read_source,
)
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
    LlmCallRecord,
    Payload,
    ProviderCallCompleted,
    QuestionRegistered,
    RecordedRequest,
    RunStarted,
    SystemRef,
)
from warehouse.ids import event_id_for, run_id_for
from warehouse.log import EventLog

QA_FORMATS = ("nimble", "simple-evals", "csv", "jsonl", "inspect")
MAPPED_FORMATS = ("csv", "jsonl")
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
    cost_usd: float | None = None  # what the file says answering the row cost, in USD
    llm: LlmCallRecord | None = None  # the answering model's call, when the file records it


@dataclass
class ParsedQa:
    format: str
    rows: list[QaRow]
    header: dict[str, Any] = field(default_factory=dict)
    grader_model: str | None = None
    # The file records what each row retrieved (URLs, chunks): its rows are scored by the URL
    # metrics like our lanes'. A file without (simple-evals) is a lane without retrieval.
    carries_urls: bool = True
    column_map: dict[str, str] | None = None  # per-row formats: {our field: the file's column}
    grader_label: str | None = None  # the regime's name when the file names its grader


def _grade(value: Any, *, allow_none: bool = False) -> str | None:
    """A / B / C from a grade letter or word; raises ValueError with the problem."""
    text = str(value).strip().lower().replace(" ", "_") if value is not None else ""
    if text in GRADES:
        return GRADES[text]
    if allow_none and text in ("", "not_evaluated"):
        return None
    raise ValueError(
        f"expected a grade A/B/C or correct/incorrect/not_attempted, got {kind(value)}"
    )


def _nimble_chunks(value: str | None) -> list[Chunk]:
    """The row's `chunks_json`; raises ValueError with the problem."""
    if not value:
        return []
    try:
        items = bounded_json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg})") from None
    if not isinstance(items, list):
        raise ValueError(f"expected a JSON list of chunks, got {kind(items)}")
    chunks = []
    for rank, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise ValueError(f"item {rank - 1}: expected an object, got {kind(item)}")
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


def _csv_records(source: SourceFile) -> tuple[list[str], list[tuple[int, dict[str, Any]]]]:
    """(header, [(line, row)]) with each row's first physical line (the header is line 1; a
    quoted cell may span lines)."""
    reader = csv.DictReader(io.StringIO(source.text(), newline=""))
    columns = list(reader.fieldnames or [])
    records = []
    line = reader.line_num + 1
    for row in reader:
        records.append((line, row))
        line = reader.line_num + 1
    return columns, records


def _nimble(source: SourceFile) -> ParsedQa:
    columns, records = _csv_records(source)
    required = ("query", "generated_answer", "evaluation_result")
    missing = [c for c in required if c not in columns]
    if missing:
        raise source.row_error(1, None, f"missing column(s) {missing}")
    problems = FileProblems(source.path)
    rows = []
    for number, (line, row) in enumerate(records, start=1):
        status = (row.get("request_status") or "ok").strip()
        latency = _float(row.get("request_response_time_ms"))
        try:
            grade = _grade(row.get("evaluation_result"), allow_none=True)
        except ValueError as exc:
            problems.add(line, "evaluation_result", str(exc))
            continue
        try:
            chunks = _nimble_chunks(row.get("chunks_json"))
        except ValueError as exc:
            problems.add(line, "chunks_json", str(exc))
            continue
        rows.append(
            QaRow(
                record=number,
                question=row["query"],
                answer=row.get("generated_answer") or "",
                grade=grade,
                landed=status == "ok",
                error=(row.get("request_error") or None) if status != "ok" else None,
                chunks=chunks,
                latency_s=latency / 1000 if latency is not None else None,
            )
        )
    problems.check()
    return ParsedQa(format="nimble", rows=rows)


def _simple_evals(source: SourceFile) -> ParsedQa:
    document = source.json()
    if not isinstance(document, dict):
        raise source.row_error(None, "(top level)", f"expected a JSON object, got {kind(document)}")
    convos = document.get("convos")
    if not isinstance(convos, list):
        raise source.row_error(
            None, "convos", f"expected a list of conversations, got {kind(convos)}"
        )
    metadata = document.get("metadata") or {}
    per_row = metadata.get("example_level_metadata") if isinstance(metadata, dict) else None
    if not isinstance(per_row, list) or len(per_row) != len(convos):
        raise source.row_error(
            None,
            "metadata.example_level_metadata",
            "needs one per-question grade per conversation (simple-evals keeps them only in its "
            "HTML otherwise)",
        )
    problems = FileProblems(source.path)
    rows = []
    for index, (convo, meta) in enumerate(zip(convos, per_row, strict=True)):
        where = f"convos[{index}]"
        if not isinstance(convo, list) or not convo:
            problems.add(None, where, f"expected a list of messages, got {kind(convo)}")
            continue
        users = [m.get("content") for m in convo if isinstance(m, dict) and m.get("role") == "user"]
        answers = [
            m.get("content") for m in convo if isinstance(m, dict) and m.get("role") == "assistant"
        ]
        if not users or not isinstance(users[0], str):
            problems.add(None, where, "no user message with the question")
            continue
        meta = meta if isinstance(meta, dict) else {}
        grade_value = meta.get("grade") or next(
            (k for k in ("is_correct", "is_incorrect", "is_not_attempted") if meta.get(k)), None
        )
        try:
            grade = _grade(grade_value)
        except ValueError as exc:
            problems.add(None, f"metadata.example_level_metadata[{index}]", str(exc))
            continue
        rows.append(
            QaRow(
                record=index + 1,
                question=users[0],
                answer=answers[-1] if answers and isinstance(answers[-1], str) else "",
                grade=grade,
            )
        )
    problems.check()
    header = {k: document[k] for k in ("score", "metrics") if k in document}
    return ParsedQa(format="simple-evals", rows=rows, header=header, carries_urls=False)


# --- per-row files with a column map (csv, jsonl) --------------------------------------------

# Our fields a per-row file can carry. The latency's unit is named by the field: a map entry
# latency_s=elapsed reads seconds, latency_ms=elapsed milliseconds; cost_usd is US dollars for
# the row.
MAP_FIELDS = ("question", "answer", "grade", "urls", "latency_s", "latency_ms", "cost_usd")
REQUIRED_FIELDS = ("question", "answer", "grade")
LATENCY_FIELDS = ("latency_s", "latency_ms")


def parse_column_map(text: str | None) -> dict[str, str]:
    """`--map question=problem,answer=predicted,...` as {our field: the file's column}."""
    mapping: dict[str, str] = {}
    for entry in (text or "").split(","):
        if not entry.strip():
            continue
        ours, sep, theirs = entry.partition("=")
        ours, theirs = ours.strip(), theirs.strip()
        if not sep or not ours or not theirs:
            raise ImportFormatError(f"--map: {entry.strip()!r} is not FIELD=COLUMN")
        if ours not in MAP_FIELDS:
            raise ImportFormatError(
                f"--map: {ours!r} is not a field; expected one of {', '.join(MAP_FIELDS)}"
            )
        if ours in mapping:
            raise ImportFormatError(f"--map: {ours!r} is mapped twice")
        mapping[ours] = theirs
    if all(f in mapping for f in LATENCY_FIELDS):
        raise ImportFormatError("--map: map latency_s or latency_ms, not both")
    return mapping


def _column_map(given: dict[str, str], columns: list[str], source: SourceFile) -> dict[str, str]:
    """The map in effect: each field the user mapped, else the column of the field's own name
    when the file has one (a CSV in the documented layout needs no --map)."""
    mapping = dict(given)
    for name in MAP_FIELDS:
        if name in mapping or name not in columns:
            continue
        if name in LATENCY_FIELDS and any(f in mapping for f in LATENCY_FIELDS):
            continue  # the user named the latency column: the other unit is not read
        mapping[name] = name
    unmapped = [f for f in REQUIRED_FIELDS if f not in mapping]
    if unmapped:
        raise source.row_error(
            1,
            None,
            f"no column for {unmapped}: name them with --map "
            f"(e.g. --map question=problem,answer=predicted,grade=grade)",
        )
    return mapping


def _number(value: Any) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {kind(value)}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number, got {kind(value)}") from None
    if number != number or number < 0 or number == float("inf"):
        raise ValueError(f"expected a number >= 0, got {kind(value)}")
    return number


def _urls(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list) and all(isinstance(u, str) for u in value):
        return [u.strip() for u in value if u.strip()]
    raise ValueError(f"expected URLs (a list, or text separated by spaces), got {kind(value)}")


_MISSING = object()  # a mapped column absent from a JSON record (reported once)


def _mapped_rows(
    source: SourceFile, fmt: str, given: dict[str, str]
) -> tuple[list[QaRow], dict[str, str]]:
    problems = FileProblems(source.path)
    if fmt == "csv":
        columns, records = _csv_records(source)
        mapping = _column_map(given, columns, source)
        absent = [f"{ours}={theirs}" for ours, theirs in mapping.items() if theirs not in columns]
        if absent:
            raise source.row_error(
                1, None, f"no column for {absent}; the header has {columns[:20]}"
            )
    else:
        records = source.jsonl(problems)
        columns = sorted({key for _, record in records for key in record})
        mapping = _column_map(given, columns, source)
    rows = []
    for number, (line, record) in enumerate(records, start=1):
        ok = True

        def cell(name: str, line: int = line, record: dict[str, Any] = record) -> Any:
            nonlocal ok
            column = mapping.get(name)
            if column is None:
                return None
            if column not in record and fmt == "jsonl" and name in REQUIRED_FIELDS:
                problems.add(line, column, f"missing (mapped to {name})")
                ok = False
                return _MISSING
            return record.get(column)

        question = cell("question")
        answer = cell("answer")
        grade_value = cell("grade")
        grade = None
        if question is _MISSING:
            pass
        elif not isinstance(question, str) or not question.strip():
            problems.add(
                line, mapping["question"], f"expected the question text, got {kind(question)}"
            )
            ok = False
        if answer is not _MISSING and answer is not None and not isinstance(answer, str):
            problems.add(line, mapping["answer"], f"expected text or null, got {kind(answer)}")
            ok = False
        if grade_value is not _MISSING:
            try:
                grade = _grade(grade_value)
            except ValueError as exc:
                problems.add(line, mapping["grade"], str(exc))
                ok = False
        latency_s = None
        for name, scale in (("latency_s", 1.0), ("latency_ms", 1000.0)):
            if name in mapping:
                try:
                    value = _number(cell(name))
                    latency_s = None if value is None else value / scale
                except ValueError as exc:
                    problems.add(line, mapping[name], str(exc))
                    ok = False
        cost_usd = None
        if "cost_usd" in mapping:
            try:
                cost_usd = _number(cell("cost_usd"))
            except ValueError as exc:
                problems.add(line, mapping["cost_usd"], str(exc))
                ok = False
        try:
            urls = _urls(cell("urls"))
        except ValueError as exc:
            problems.add(line, mapping["urls"], str(exc))
            ok = False
        if not ok:
            continue
        rows.append(
            QaRow(
                record=number,
                question=question,
                answer=answer or "",
                grade=grade,
                chunks=[Chunk(rank=r, url=u, title="", text="") for r, u in enumerate(urls, 1)],
                latency_s=latency_s,
                cost_usd=cost_usd,
            )
        )
    problems.check()
    return rows, mapping


def _per_row(source: SourceFile, fmt: str, given: dict[str, str]) -> ParsedQa:
    rows, mapping = _mapped_rows(source, fmt, given)
    # the map is part of what was imported: the same bytes read another way are another import
    return ParsedQa(format=fmt, rows=rows, carries_urls="urls" in mapping, column_map=mapping)


def _inspect(source: SourceFile) -> ParsedQa:
    from collectors.imports.inspect_log import parse_inspect_log

    log = parse_inspect_log(source)
    rows = [
        QaRow(
            record=number,
            question=sample.question,
            answer=sample.answer,
            grade=sample.grade,
            landed=sample.error is None,
            error=sample.error,
            latency_s=sample.latency_s,
            cost_usd=sample.cost_usd,
            llm=sample.llm,
        )
        for number, sample in enumerate(log.samples, start=1)
    ]
    label = f"{log.scorer}:{log.grader_model}" if log.grader_model else log.scorer
    return ParsedQa(
        format="inspect",
        rows=rows,
        header=log.header,
        grader_model=log.grader_model,
        carries_urls=False,  # an inspect sample records no retrieval of ours to score
        grader_label=label,
    )


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
    column_map: str | None = None,
    argv: list[str] | tuple[str, ...] = (),
) -> ImportSummary:
    """Validate the whole file (every problem reported at once), then append one closed import
    run. `column_map` (`--map`, csv and jsonl only): `ours=theirs,...` over MAP_FIELDS."""
    if fmt not in QA_FORMATS:
        raise ImportFormatError(f"--format: {fmt!r} is not one of {', '.join(QA_FORMATS)}")
    given = parse_column_map(column_map)
    if given and fmt not in MAPPED_FORMATS:
        raise ImportFormatError(
            f"--map: the {fmt} format has fixed columns; --map is for {' and '.join(MAPPED_FORMATS)}"
        )
    if not lane.strip():
        raise ImportFormatError(f"{file}: a lane name is required (--lane)")
    clock = time.monotonic()
    source = read_source(file)
    if fmt in MAPPED_FORMATS:
        parsed = _per_row(source, fmt, given)
    else:
        parsed = {"nimble": _nimble, "simple-evals": _simple_evals, "inspect": _inspect}[fmt](
            source
        )
    if not parsed.rows:
        raise ImportFormatError(f"{source.path}: no rows")
    joined, unmatched = join_questions(parsed.rows, dataset.questions)
    if not joined:
        raise ImportFormatError(
            f"{source.path}: no row matches a question of {dataset.dataset.name} by text "
            f"(first unmatched: {unmatched[0]})"
        )
    grader_id = imported_judge_id(
        fmt, parsed.grader_model, grader_label or parsed.grader_label or "unnamed-grader"
    )
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
    if given:  # the same bytes read through another map are another import
        spec["column_map"] = given
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
                cost_usd=row.cost_usd,
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
            llm=row.llm,
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
