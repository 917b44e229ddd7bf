"""A live-URL corpus: `url,vertical[,render]` as CSV (header row) or JSONL (one object a line).

Validation happens in full before anything is planned, so a bad file writes nothing; every
error names the file, the line and the field. `render` is one of auto | fast | full; an empty or
missing value means "whatever the run's --render says". A URL given twice is an error (it would
be scored twice). The dataset sha256 is of the file's bytes, so an edited file is a new run.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from warehouse import bounded_json
from warehouse.canonical import sha256_hex
from warehouse.events import DatasetRef

Render = Literal["auto", "fast", "full"]
RENDERS: tuple[Render, ...] = ("auto", "fast", "full")
FIELDS = ("url", "vertical", "render")


class UrlCorpusError(ValueError):
    """The URL file is unusable; the message names the file, line and field."""


@dataclass(frozen=True)
class LiveUrl:
    item_id: str
    position: int
    url: str
    vertical: str
    render: Render | None  # None: the run's --render decides


@dataclass(frozen=True)
class UrlCorpus:
    dataset: DatasetRef
    items: tuple[LiveUrl, ...]


def url_item_id(url: str) -> str:
    """A stable id per URL (the same URL in two files is the same item)."""
    return "u-" + sha256_hex(url.encode("utf-8"))[:20]


def _rows(path: Path, text: str) -> list[tuple[int, dict[str, object]]]:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        rows = []
        for line_no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = bounded_json.loads(line)
            except json.JSONDecodeError as exc:
                raise UrlCorpusError(f"{path}:{line_no}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise UrlCorpusError(
                    f"{path}:{line_no}: expected an object, got {type(row).__name__}"
                )
            rows.append((line_no, row))
        return rows
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    missing = [name for name in ("url", "vertical") if name not in header]
    if missing:
        raise UrlCorpusError(
            f"{path}:1: header must have url,vertical[,render]; missing {', '.join(missing)}"
        )
    extra = [name for name in header if name not in FIELDS]
    if extra:
        raise UrlCorpusError(
            f"{path}:1: unknown column(s) {', '.join(extra)}; expected url,vertical[,render]"
        )
    return [(line_no, dict(row)) for line_no, row in enumerate(reader, start=2)]


def _field(
    path: Path, line_no: int, row: dict[str, object], name: str, required: bool
) -> str | None:
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise UrlCorpusError(f"{path}:{line_no}: field '{name}' is missing or empty")
        return None
    if not isinstance(value, str):
        raise UrlCorpusError(
            f"{path}:{line_no}: field '{name}' must be a string, got {type(value).__name__}"
        )
    return value.strip()


def load_urls(path: Path, *, limit: int | None = None) -> UrlCorpus:
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UrlCorpusError(f"{path}: not found") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UrlCorpusError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    items: list[LiveUrl] = []
    seen: dict[str, int] = {}
    for line_no, row in _rows(path, text):
        unknown = sorted(set(row) - set(FIELDS))
        if unknown and path.suffix.lower() in (".jsonl", ".ndjson"):
            raise UrlCorpusError(f"{path}:{line_no}: unknown field(s) {', '.join(unknown)}")
        url = _field(path, line_no, row, "url", True)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise UrlCorpusError(
                f"{path}:{line_no}: field 'url' must be an http(s) URL, got {url!r}"
            )
        vertical = _field(path, line_no, row, "vertical", True)
        render = _field(path, line_no, row, "render", False)
        if render is not None and render not in RENDERS:
            raise UrlCorpusError(
                f"{path}:{line_no}: field 'render' must be one of {', '.join(RENDERS)}, got {render!r}"
            )
        if url in seen:
            raise UrlCorpusError(f"{path}:{line_no}: field 'url' repeats line {seen[url]} ({url})")
        seen[url] = line_no
        items.append(LiveUrl(url_item_id(url), len(items), url, vertical, render))  # type: ignore[arg-type]
    if not items:
        raise UrlCorpusError(f"{path}: no URLs")
    if limit is not None:
        items = items[:limit]
    dataset = DatasetRef(
        name=path.name, uri=path.resolve().as_uri(), sha256=sha256_hex(data), item_count=len(items)
    )
    return UrlCorpus(dataset=dataset, items=tuple(items))
