"""The pinned SimpleQA test set (OpenAI): load, verify, parse.

The file is used only when its bytes hash to the pinned sha256 (methodology 2.1, 5.3): a
mirror that drifted is refused, naming the file. Without a local copy it is downloaded once
from the URL the reference grader reads (openai/simple-evals `simpleqa_eval.py`) into the
cache, verified before it becomes visible.

Parsing follows the file's real shape: a real CSV parser (6 rows have newlines inside quoted
fields), `metadata` is a Python literal read with `ast.literal_eval` (never eval), answers
stripped (211 carry whitespace), gold URLs kept exactly as written.
"""

from __future__ import annotations

import ast
import csv
import io
from pathlib import Path

import httpx

from collectors.pinned import PinError, fetch_pinned
from collectors.qa.dataset import DatasetError, QaDataset, QaQuestion, question_item_id
from warehouse.canonical import sha256_hex
from warehouse.events import DatasetRef

NAME = "simpleqa"
FILE_NAME = "simple_qa_test_set.csv"
SOURCE_URL = "https://openaipublic.blob.core.windows.net/simple-evals/simple_qa_test_set.csv"
SHA256 = "feee3f7e7db3617e94e8fcf1977b756ec420ef8568f4e0fcbbe0e92e9d5fc032"
ROW_COUNT = 4_326
HEADER = ["metadata", "problem", "answer"]


def cached_path(cache_dir: Path) -> Path:
    return Path(cache_dir) / "simpleqa" / f"{SHA256[:16]}-{FILE_NAME}"


def load_simpleqa(
    dataset_file: Path | None = None,
    *,
    cache_dir: Path | None = None,
    client: httpx.Client | None = None,
    source_url: str = SOURCE_URL,
) -> QaDataset:
    """The official test set from `dataset_file`, else from (or downloaded into) the cache.

    Any file is accepted only if it is byte-identical to the pinned upstream file; a
    different file can still be run as a user question set (`question_sets`)."""
    if dataset_file is not None:
        path = Path(dataset_file).expanduser()
        if not path.is_file():
            raise DatasetError(f"{path}: not found (expected the SimpleQA CSV, {FILE_NAME})")
    else:
        if cache_dir is None:
            raise DatasetError("no SimpleQA file given and no cache directory to download into")
        path = cached_path(cache_dir)
        if not path.is_file():
            try:
                fetch_pinned(source_url, path, SHA256, client=client)
            except PinError as exc:
                raise DatasetError(f"SimpleQA test set: {exc}") from None
    data = path.read_bytes()
    actual = sha256_hex(data)
    if actual != SHA256:
        raise DatasetError(
            f"{path}: sha256 {actual} is not the pinned SimpleQA test set ({SHA256}); "
            "refusing a drifted or modified copy. To run your own questions, use it as a "
            "user question set (columns question, gold_answer[, gold_urls, topic])."
        )
    questions = parse_simpleqa_csv(data, path)
    return QaDataset(
        benchmark="simpleqa",
        dataset=DatasetRef(name=NAME, uri=SOURCE_URL, sha256=SHA256, item_count=len(questions)),
        path=path,
        questions=tuple(questions),
    )


def parse_simpleqa_csv(data: bytes, path: Path | str) -> list[QaQuestion]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 (byte {exc.start})") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        return _questions(reader, path)
    except csv.Error as exc:  # e.g. a field over csv.field_size_limit(): not a question
        raise DatasetError(f"{path}: line {reader.line_num}: not a CSV record ({exc})") from None


def _questions(reader, path: Path | str) -> list[QaQuestion]:
    header = next(reader, None)
    if header != HEADER:
        raise DatasetError(f"{path}: header {header!r}, expected {HEADER!r}")
    questions: list[QaQuestion] = []
    for position, row in enumerate(reader):
        line = reader.line_num  # physical line where this record ends
        if len(row) != 3:
            raise DatasetError(f"{path}: line {line}: expected 3 fields, got {len(row)}")
        metadata_text, problem, answer = row
        try:
            metadata = ast.literal_eval(metadata_text)
        except (ValueError, SyntaxError) as exc:
            raise DatasetError(
                f"{path}: line {line}: field 'metadata' is not a Python literal ({exc})"
            ) from None
        if not isinstance(metadata, dict):
            raise DatasetError(f"{path}: line {line}: field 'metadata' is not a dict")
        urls = metadata.get("urls", [])
        if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
            raise DatasetError(f"{path}: line {line}: metadata 'urls' is not a list of strings")
        questions.append(
            QaQuestion(
                item_id=question_item_id(position, problem),
                row_position=position,
                problem=problem,
                gold_answer=answer.strip(),
                gold_urls_raw=tuple(urls),
                topic=metadata.get("topic"),
                answer_type=metadata.get("answer_type"),
            )
        )
    if len(questions) != ROW_COUNT:
        raise DatasetError(f"{path}: {len(questions)} rows, expected {ROW_COUNT}")
    return questions
