"""Reading an imported file: bytes, sha256, and errors that name the file and the field."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from warehouse import bounded_json
from warehouse.canonical import sha256_hex


class ImportFormatError(ValueError):
    """The imported file is unusable; the message names the file and the record/field."""


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
        return ImportFormatError(f"{self.path}: {where}: {problem}")

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

    def jsonl(self) -> list[tuple[int, dict[str, Any]]]:
        """(line number, object) for every non-blank line."""
        records = []
        for number, line in enumerate(self.text().split("\n"), start=1):
            if not line.strip():
                continue
            try:
                record = bounded_json.loads(line)
            except json.JSONDecodeError as exc:
                raise ImportFormatError(
                    f"{self.path}: line {number}: not valid JSON ({exc.msg}, column {exc.colno})"
                ) from None
            if not isinstance(record, dict):
                raise self.error(f"line {number}", f"expected a JSON object, got {kind(record)}")
            records.append((number, record))
        if not records:
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
