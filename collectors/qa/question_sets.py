"""User question sets: your own questions, run through the same lanes as SimpleQA.

A question set is a CSV (header row) or JSONL file (one object per line) with

    question      required, non-empty text
    gold_answer   required, non-empty text (stripped)
    gold_urls     optional: a list of strings (JSONL) or URLs separated by newlines/spaces;
                  each an absolute http(s) URL
    topic         optional text (or `vertical`: the vertical benchmark's question set)

Lines starting with `#` are comments. Text holds no NUL byte and no field is over
`collectors.user_text.MAX_TEXT_BYTES`. Anything else is refused with the file, line and field
named, before any event is written.
The set is pinned like a dataset: its `DatasetRef` carries the sha256 of the file's bytes, so
an edited file is a different dataset (and a different run).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from collectors.qa import simpleqa
from collectors.qa.dataset import DatasetError, QaDataset, QaQuestion, question_item_id
from collectors.user_text import text_problem, url_problem
from warehouse import bounded_json
from warehouse.canonical import sha256_hex
from warehouse.events import DatasetRef

# Ten questions answerable from the offline demo corpus (collectors.demo.extraction_corpus).
DEMO_QUESTION_SET = Path(__file__).resolve().with_name("demo_questions.jsonl")

REQUIRED_FIELDS = ("question", "gold_answer")
OPTIONAL_FIELDS = ("gold_urls", "topic", "vertical")  # vertical: an alias of topic
KNOWN_FIELDS = REQUIRED_FIELDS + OPTIONAL_FIELDS
CSV_SUFFIXES = (".csv",)
JSONL_SUFFIXES = (".jsonl", ".ndjson")


def load_question_set(path: Path) -> QaDataset:
    path = Path(path).expanduser()
    if not path.is_file():
        raise DatasetError(f"{path}: not found (expected a .csv or .jsonl question set)")
    data = path.read_bytes()
    digest = sha256_hex(data)
    if digest == simpleqa.SHA256:
        raise DatasetError(
            f"{path}: this is the official SimpleQA test set; run it as the simpleqa "
            "benchmark (--dataset-file), not as a user question set"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 (byte {exc.start})") from None
    suffix = path.suffix.lower()
    if suffix in CSV_SUFFIXES:
        records = list(_csv_records(text, path))
    elif suffix in JSONL_SUFFIXES:
        records = list(_jsonl_records(text, path))
    else:
        raise DatasetError(
            f"{path}: unknown question-set format {suffix or '(no suffix)'!r}; "
            f"use {', '.join(CSV_SUFFIXES + JSONL_SUFFIXES)}"
        )
    if not records:
        raise DatasetError(f"{path}: has no questions")
    questions = _validate(records, path)
    return QaDataset(
        benchmark="qa",
        dataset=DatasetRef(
            name=path.stem,
            uri=path.resolve().as_uri(),
            sha256=digest,
            item_count=len(questions),
        ),
        path=path,
        questions=tuple(questions),
    )


def _without_comments(text: str) -> tuple[str, int]:
    """Lines starting with `#` become blank (line numbers in errors stay the file's own); the
    leading comment block is dropped so the header is the first line csv sees. Returns the text
    and how many lines were dropped."""
    lines = ["" if line.lstrip().startswith("#") else line for line in text.split("\n")]
    skipped = 0
    while skipped < len(lines) and not lines[skipped].strip():
        skipped += 1
    return "\n".join(lines[skipped:]), skipped


def _csv_records(text: str, path: Path):
    text, offset = _without_comments(text)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        yield from _dict_records(reader, path, offset)
    except csv.Error as exc:  # e.g. a field over csv.field_size_limit()
        raise DatasetError(
            f"{path}: line {reader.line_num + 1 + offset}: not a CSV record ({exc})"
        ) from None


def _dict_records(reader: csv.DictReader, path: Path, offset: int):
    header = reader.fieldnames or []
    if header == simpleqa.HEADER:
        raise DatasetError(
            f"{path}: line 1: this has the SimpleQA columns {header}; a modified SimpleQA "
            f"file must be converted to {', '.join(REQUIRED_FIELDS)} (it is not the pinned "
            "upstream file, so it cannot run as simpleqa)"
        )
    _check_fields(header, path, 1 + offset)
    start = 2
    for row in reader:
        if None in row:
            raise DatasetError(
                f"{path}: line {start + offset}: more values than the {len(header)} header columns"
            )
        if all(not (value or "").strip() for value in row.values()):
            start = reader.line_num + 1
            continue  # a blank line
        yield start + offset, {key: value for key, value in row.items() if value is not None}
        start = reader.line_num + 1


def _jsonl_records(text: str, path: Path):
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue  # blank, or a comment (bench init's templates explain the fields)
        try:
            record = bounded_json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{path}: line {line_no}: not valid JSON ({exc.msg} at column {exc.colno})"
            ) from None
        if not isinstance(record, dict):
            raise DatasetError(
                f"{path}: line {line_no}: expected a JSON object with "
                f"{', '.join(REQUIRED_FIELDS)}, got {type(record).__name__}"
            )
        _check_fields(list(record), path, line_no)
        yield line_no, record


def _check_fields(fields: list[str], path: Path, line_no: int) -> None:
    unknown = [name for name in fields if name not in KNOWN_FIELDS]
    if unknown:
        raise DatasetError(
            f"{path}: line {line_no}: unknown field(s) {', '.join(map(repr, unknown))}; "
            f"expected {', '.join(REQUIRED_FIELDS)} and optionally {', '.join(OPTIONAL_FIELDS)}"
        )
    missing = [name for name in REQUIRED_FIELDS if name not in fields]
    if missing:
        raise DatasetError(
            f"{path}: line {line_no}: field(s) {', '.join(map(repr, missing))} missing"
        )


def _text(
    record: dict[str, Any], name: str, path: Path, line_no: int, *, required: bool
) -> str | None:
    value = record.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise DatasetError(f"{path}: line {line_no}: field {name!r} is empty")
        return None
    if not isinstance(value, str):
        raise DatasetError(
            f"{path}: line {line_no}: field {name!r} must be text, got {type(value).__name__}"
        )
    problem = text_problem(value)
    if problem is not None:
        raise DatasetError(f"{path}: line {line_no}: field {name!r} {problem}")
    return value.strip()


def _urls(record: dict[str, Any], path: Path, line_no: int) -> tuple[str, ...]:
    value = record.get("gold_urls")
    if value is None:
        return ()
    if isinstance(value, str):
        named = [("gold_urls", url) for url in value.split()]
    elif isinstance(value, list) and all(isinstance(url, str) for url in value):
        named = [(f"gold_urls[{i}]", url) for i, url in enumerate(value) if url.strip()]
    else:
        raise DatasetError(
            f"{path}: line {line_no}: field 'gold_urls' must be a list of strings or text with "
            f"URLs separated by spaces/newlines, got {type(value).__name__}"
        )
    for field, url in named:
        problem = url_problem(url)
        if problem is not None:
            raise DatasetError(f"{path}: line {line_no}: field {field!r} {problem}")
    urls = tuple(url for _field, url in named)
    # The size limit holds for the field as a whole: it is stored in one event.
    problem = text_problem("\n".join(urls))
    if problem is not None:
        raise DatasetError(f"{path}: line {line_no}: field 'gold_urls' {problem}")
    return urls


def _validate(records: list[tuple[int, dict[str, Any]]], path: Path) -> list[QaQuestion]:
    questions: list[QaQuestion] = []
    seen: dict[str, int] = {}
    for position, (line_no, record) in enumerate(records):
        problem = _text(record, "question", path, line_no, required=True)
        gold = _text(record, "gold_answer", path, line_no, required=True)
        if problem in seen:
            raise DatasetError(
                f"{path}: line {line_no}: field 'question' repeats the question on line "
                f"{seen[problem]}"
            )
        seen[problem] = line_no
        questions.append(
            QaQuestion(
                item_id=question_item_id(position, problem),
                row_position=position,
                problem=problem,
                gold_answer=gold,
                gold_urls_raw=_urls(record, path, line_no),
                topic=_text(record, "topic", path, line_no, required=False)
                or _text(record, "vertical", path, line_no, required=False),
            )
        )
    return questions
