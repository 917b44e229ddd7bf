"""Reading an imported file: bytes, sha256, and errors that name the file and the field."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from warehouse import bounded_json
from warehouse.canonical import sha256_hex

MAX_ERRORS = (
    20  # problems of one file reported at once; past this the file is clearly not the format
)


class ImportFormatError(ValueError):
    """The imported file is unusable; the message names the file and the record/field."""


def problem_text(path: Path, line: int | str | None, field: str | None, problem: str) -> str:
    """The one wording of every importer's row errors: `FILE: line N: field X: problem`."""
    where = "" if line is None else f" line {line}:"
    what = "" if field is None else f" field {field}:"
    return f"{path}:{where}{what} {problem}"


_LINE = re.compile(r"line (\d+)(?:[.:]\s*)?(.*)$", re.DOTALL)


def located(where: str) -> tuple[int | None, str | None]:
    """(line, field) of a parser's `where`: `line 3.verdicts[2].id` -> (3, "verdicts[2].id"),
    `line 3` -> (3, None), `results[0].runs` -> (None, "results[0].runs")."""
    match = _LINE.match(where)
    if match is None:
        return None, where or None
    return int(match.group(1)), match.group(2) or None


class FileProblems:
    """Every problem of a file, up to `cap`, so a user fixes them in one pass. `add` records one;
    `check` raises them all together (one per line of the message), and nothing is written."""

    def __init__(self, path: Path, cap: int = MAX_ERRORS) -> None:
        self.path = path
        self.cap = cap
        self.messages: list[tuple[float, int, str]] = []  # (line, arrival, message)

    def add(self, line: int | str | None, field: str | None, problem: str) -> None:
        self._keep(line, problem_text(self.path, line, field, problem))

    def add_error(self, error: ImportFormatError, line: int | None = None) -> None:
        self._keep(line, str(error))

    def _keep(self, line: int | str | None, message: str) -> None:
        order = line if isinstance(line, int) else float("inf")
        self.messages.append((order, len(self.messages), message))
        if len(self.messages) >= self.cap:
            self.check(capped=True)

    def __bool__(self) -> bool:
        return bool(self.messages)

    def check(self, *, capped: bool = False) -> None:
        if not self.messages:
            return
        count = (
            f"the first {len(self.messages)} problems (stopped reading)"
            if capped
            else f"{len(self.messages)} problem(s)"
        )
        lines = [message for _, _, message in sorted(self.messages)]
        raise ImportFormatError(f"{self.path}: {count}:\n" + "\n".join(lines))


@dataclass(frozen=True)
class SourceFile:
    path: Path
    data: bytes

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def sha256(self) -> str:
        return sha256_hex(self.data)

    def error(self, where: str, problem: str) -> ImportFormatError:
        """`where` as the parsers build it, `line N` + `.field.path` (a JSONL record) or a
        field path alone (one JSON document), in the one wording of `problem_text`."""
        line, field = located(where)
        return ImportFormatError(problem_text(self.path, line, field, problem))

    def row_error(self, line: int | str | None, field: str | None, problem: str):
        return ImportFormatError(problem_text(self.path, line, field, problem))

    def text(self) -> str:
        try:
            return self.data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportFormatError(f"{self.path}: not UTF-8 (byte {exc.start})") from None

    def json(self) -> Any:
        try:
            return bounded_json.loads(self.text())
        except json.JSONDecodeError as exc:
            raise ImportFormatError(
                f"{self.path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from None

    def jsonl(self, problems: FileProblems | None = None) -> list[tuple[int, dict[str, Any]]]:
        """(line number, object) for every non-blank line. With `problems`, a bad line is
        recorded there and skipped (the caller reports every problem at once)."""
        records = []
        for number, line in enumerate(self.text().split("\n"), start=1):
            if not line.strip():
                continue
            try:
                record = bounded_json.loads(line)
            except json.JSONDecodeError as exc:
                error = self.row_error(
                    number, None, f"not valid JSON ({exc.msg}, column {exc.colno})"
                )
                if problems is None:
                    raise error from None
                problems.add_error(error, number)
                continue
            if not isinstance(record, dict):
                error = self.row_error(number, None, f"expected a JSON object, got {kind(record)}")
                if problems is None:
                    raise error
                problems.add_error(error, number)
                continue
            records.append((number, record))
        if not records and not problems:
            raise ImportFormatError(f"{self.path}: no records (expected one JSON object per line)")
        return records


def read_source(path: Path) -> SourceFile:
    path = Path(path).expanduser()
    try:
        return SourceFile(path, path.read_bytes())
    except FileNotFoundError:
        raise ImportFormatError(f"{path}: not found") from None
    except IsADirectoryError:
        raise ImportFormatError(f"{path}: is a directory, expected a file") from None


def kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {value}"
    if isinstance(value, str):
        return f"text {value[:40]!r}"
    return f"{type(value).__name__} {json.dumps(value)[:40]}"


def number_or_none(value: Any, source: SourceFile, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise source.error(where, f"expected a number or null, got {kind(value)}")
    return float(value)
