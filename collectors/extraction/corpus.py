"""Extraction corpora in the article-extraction-benchmark layout.

    <dir>/ground-truth.json     {"<item id>": {"articleBody": str, "url": str | null}, ...}
    <dir>/html/<item id>.html.gz   the page, gzip-compressed UTF-8 HTML

The dataset sha256 is the sha256 of the ground-truth.json bytes. Every page is decompressed
and decoded at load, so a broken corpus fails here, naming the file, before any event is
written. `input_sha256`/`input_bytes` describe the decompressed HTML an engine is fed.

A directory whose ground truth has exactly the item ids of the pinned upstream benchmark must
also have its pinned bytes (see `article_benchmark`): a drifted or edited mirror is refused
rather than silently scored as if it were the published benchmark.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from collectors.extraction import article_benchmark_identity as pinned
from collectors.extraction.corpus_format import (
    GROUND_TRUTH_FILE,
    HTML_DIR,
    HTML_SUFFIX,
    CorpusError,
)
from warehouse import bounded_json
from warehouse.canonical import sha256_hex
from warehouse.events import DatasetRef

# Ids become file names: keep them to characters that cannot escape the html/ directory.
_ITEM_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


@dataclass(frozen=True)
class PageInput:
    html: str
    sha256: str
    size: int


@dataclass(frozen=True)
class CorpusItem:
    item_id: str
    position: int  # 0-based, in item-id order
    url: str | None
    truth_text: str
    html_path: Path
    html_sha256: str  # of the decompressed HTML bytes
    html_bytes: int

    def read_html(self) -> PageInput:
        return read_page(self.html_path, self.item_id)


@dataclass(frozen=True)
class Corpus:
    root: Path
    dataset: DatasetRef
    items: tuple[CorpusItem, ...]

    def item(self, item_id: str) -> CorpusItem:
        for item in self.items:
            if item.item_id == item_id:
                return item
        raise KeyError(item_id)

    @property
    def item_ids(self) -> tuple[str, ...]:
        return tuple(item.item_id for item in self.items)


def html_path_for(root: Path, item_id: str) -> Path:
    return root / HTML_DIR / f"{item_id}{HTML_SUFFIX}"


def read_page(path: Path, item_id: str) -> PageInput:
    raw = _decompress(path, item_id)
    return PageInput(html=_decode(raw, path), sha256=sha256_hex(raw), size=len(raw))


def _decompress(path: Path, item_id: str) -> bytes:
    try:
        return gzip.decompress(path.read_bytes())
    except FileNotFoundError:
        raise CorpusError(
            f"{path}: missing: the html file for item {item_id!r} listed in {GROUND_TRUTH_FILE}"
        ) from None
    except (OSError, EOFError, zlib.error) as exc:
        raise CorpusError(f"{path}: not a valid gzip file ({exc})") from None


def _decode(raw: bytes, path: Path) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(
            f"{path}: the page is not UTF-8 (byte {exc.start} of the decompressed HTML)"
        ) from None


def read_ground_truth(path: Path) -> tuple[bytes, dict[str, dict[str, str | None]]]:
    """The file's bytes and its entries, validated: id -> {"articleBody", "url"}."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CorpusError(
            f"{path}: not found; an extraction corpus is a directory with {GROUND_TRUTH_FILE} "
            f"and {HTML_DIR}/<id>{HTML_SUFFIX}"
        ) from None
    try:
        document = bounded_json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise CorpusError(
            f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    if not isinstance(document, dict):
        raise CorpusError(
            f"{path}: expected a JSON object mapping item ids to "
            f'{{"articleBody": ..., "url": ...}}, got {type(document).__name__}'
        )
    if not document:
        raise CorpusError(f"{path}: has no items")
    entries: dict[str, dict[str, str | None]] = {}
    for item_id, entry in document.items():
        where = f"{path}: item {item_id!r}"
        if not _ITEM_ID.match(item_id):
            raise CorpusError(
                f"{where}: item ids may only use letters, digits, '.', '_' and '-' "
                "(they name the html file)"
            )
        if not isinstance(entry, dict):
            raise CorpusError(f"{where}: expected an object, got {type(entry).__name__}")
        if "articleBody" not in entry:
            raise CorpusError(f"{where}: field 'articleBody' is missing")
        body = entry["articleBody"]
        if not isinstance(body, str):
            raise CorpusError(
                f"{where}: field 'articleBody' must be a string, got {_json_type(body)}"
            )
        url = entry.get("url")
        if url is not None and not isinstance(url, str):
            raise CorpusError(f"{where}: field 'url' must be a string, got {_json_type(url)}")
        entries[item_id] = {"articleBody": body, "url": url}
    return data, entries


def _json_type(value: object) -> str:
    return "null" if value is None else type(value).__name__


def load_corpus(
    root: Path,
    *,
    name: str | None = None,
    uri: str | None = None,
    revision: str | None = None,
) -> Corpus:
    """Load and validate a corpus directory. `name`/`uri`/`revision` label it in `DatasetRef`
    (default: the directory name and its file URI); the pinned upstream benchmark labels itself.
    """
    root = Path(root)
    truth_path = root / GROUND_TRUTH_FILE
    data, entries = read_ground_truth(truth_path)
    dataset_sha256 = sha256_hex(data)

    if pinned.matches_pinned(dataset_sha256, entries, truth_path):
        pinned.verify_pinned_files(root)
        name, uri, revision = pinned.NAME, pinned.URI, pinned.COMMIT

    items = tuple(
        _load_item(root, position, item_id, entries[item_id])
        for position, item_id in enumerate(sorted(entries))
    )
    dataset = DatasetRef(
        name=name or root.resolve().name,
        uri=uri or root.resolve().as_uri(),
        sha256=dataset_sha256,
        item_count=len(items),
        revision=revision,
    )
    return Corpus(root=root, dataset=dataset, items=items)


def _load_item(root: Path, position: int, item_id: str, entry: dict[str, str | None]) -> CorpusItem:
    path = html_path_for(root, item_id)
    page = read_page(path, item_id)  # validates gzip + UTF-8 now, not mid-run
    return CorpusItem(
        item_id=item_id,
        position=position,
        url=entry["url"],
        truth_text=entry["articleBody"] or "",
        html_path=path,
        html_sha256=page.sha256,
        html_bytes=page.size,
    )


__all__ = [
    "GROUND_TRUTH_FILE",
    "HTML_DIR",
    "HTML_SUFFIX",
    "Corpus",
    "CorpusError",
    "CorpusItem",
    "PageInput",
    "html_path_for",
    "load_corpus",
    "read_ground_truth",
    "read_page",
]
