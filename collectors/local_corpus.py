"""A local passage corpus for the offline `local-bm25` lane.

Sources: an extraction corpus directory (ground-truth.json + html/, e.g. the demo corpus:
each page's ground-truth text is chunked into passages, url = the page's url) or a JSONL file
of documents `{"url": ..., "title": ..., "text": ...}`. Passages are paragraphs packed up to
`max_chars`; the corpus is pinned by the sha256 of its source bytes like any dataset.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from collectors.extraction.corpus import Corpus, load_corpus
from warehouse import bounded_json
from warehouse.canonical import sha256_hex
from warehouse.events import DatasetRef

PASSAGE_MAX_CHARS = 1_200
CHUNKER_VERSION = "paragraph-pack@1"
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class LocalCorpusError(ValueError):
    """The local corpus is unusable; the message names the file and line/field."""


@dataclass(frozen=True)
class Passage:
    passage_id: str  # "<doc id>#<n>"
    url: str
    title: str
    text: str


@dataclass(frozen=True)
class PassageCorpus:
    dataset: DatasetRef
    passages: tuple[Passage, ...]
    max_chars: int = PASSAGE_MAX_CHARS


def split_passages(text: str, max_chars: int = PASSAGE_MAX_CHARS) -> list[str]:
    """Paragraphs packed greedily up to `max_chars`; an overlong paragraph is cut at sentences."""
    pieces: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(text):
        paragraph = " ".join(paragraph.split())
        if not paragraph:
            continue
        if len(paragraph) <= max_chars:
            pieces.append(paragraph)
            continue
        current = ""
        for sentence in _SENTENCE_END.split(paragraph):
            while len(sentence) > max_chars:  # no sentence boundary: hard cut
                if current:
                    pieces.append(current)
                    current = ""
                pieces.append(sentence[:max_chars])
                sentence = sentence[max_chars:]
            if current and len(current) + 1 + len(sentence) > max_chars:
                pieces.append(current)
                current = sentence
            else:
                current = f"{current} {sentence}".strip()
        if current:
            pieces.append(current)
    passages: list[str] = []
    for piece in pieces:
        if passages and len(passages[-1]) + 2 + len(piece) <= max_chars:
            passages[-1] = f"{passages[-1]}\n\n{piece}"
        else:
            passages.append(piece)
    return passages


def _title_from_url(url: str | None, fallback: str) -> str:
    if not url:
        return fallback
    last = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]
    return last.replace("-", " ").replace("_", " ") or fallback


def from_extraction_corpus(corpus: Corpus, max_chars: int = PASSAGE_MAX_CHARS) -> PassageCorpus:
    passages: list[Passage] = []
    for item in corpus.items:
        url = item.url or f"local:{item.item_id}"
        title = _title_from_url(item.url, item.item_id)
        for n, text in enumerate(split_passages(item.truth_text, max_chars), start=1):
            passages.append(Passage(f"{item.item_id}#{n}", url, title, text))
    return PassageCorpus(dataset=corpus.dataset, passages=tuple(passages), max_chars=max_chars)


def from_documents_jsonl(path: Path, max_chars: int = PASSAGE_MAX_CHARS) -> PassageCorpus:
    path = Path(path)
    data = path.read_bytes()
    try:
        lines = data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise LocalCorpusError(f"{path}: not UTF-8 (byte {exc.start})") from None
    passages: list[Passage] = []
    documents = 0
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            doc = bounded_json.loads(line)
        except json.JSONDecodeError as exc:
            raise LocalCorpusError(f"{path}: line {line_no}: not valid JSON ({exc.msg})") from None
        if not isinstance(doc, dict):
            raise LocalCorpusError(
                f"{path}: line {line_no}: expected an object with url, title, text"
            )
        for name in ("url", "text"):
            if not isinstance(doc.get(name), str) or not doc[name].strip():
                raise LocalCorpusError(
                    f"{path}: line {line_no}: field {name!r} must be non-empty text"
                )
        title = doc.get("title")
        if title is not None and not isinstance(title, str):
            raise LocalCorpusError(f"{path}: line {line_no}: field 'title' must be text")
        documents += 1
        for n, text in enumerate(split_passages(doc["text"], max_chars), start=1):
            passages.append(
                Passage(
                    f"{line_no}#{n}",
                    doc["url"],
                    title or _title_from_url(doc["url"], doc["url"]),
                    text,
                )
            )
    if not passages:
        raise LocalCorpusError(f"{path}: has no documents")
    dataset = DatasetRef(
        name=path.stem, uri=path.resolve().as_uri(), sha256=sha256_hex(data), item_count=documents
    )
    return PassageCorpus(dataset=dataset, passages=tuple(passages), max_chars=max_chars)


def load_local_corpus(path: Path, max_chars: int = PASSAGE_MAX_CHARS) -> PassageCorpus:
    path = Path(path).expanduser()
    if path.is_dir():
        return from_extraction_corpus(load_corpus(path), max_chars)
    if path.is_file() and path.suffix.lower() in (".jsonl", ".ndjson"):
        return from_documents_jsonl(path, max_chars)
    raise LocalCorpusError(
        f"{path}: not a corpus directory (ground-truth.json + html/) or a .jsonl file of "
        '{"url", "title", "text"} documents'
    )
