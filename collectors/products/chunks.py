"""Shaping a search response into ranked chunks: what the vendor normalisers share beyond
reading JSON (collectors.http.json_fields). Normalisers never raise on an unexpected shape: a
missing list is zero results, a non-object entry is skipped, a non-string field is empty."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import TypeAdapter

from collectors.http.json_fields import objects_at
from warehouse.events import Chunk

SNIPPET_SEPARATOR = "\n"
_CHUNK_LIST = TypeAdapter(list[Chunk])


def join_snippets(parts: Iterable[str]) -> str:
    return SNIPPET_SEPARATOR.join(p for p in parts if p)


def ranked_chunks(rows: Iterable[tuple[str, str, str]]) -> list[Chunk]:
    """(url, title, text) in provider order → chunks ranked 1..n; rows with nothing in them are
    dropped (ranks stay compact), rows missing only a URL or a text are kept."""
    kept = [
        {"url": url, "title": title, "text": text}
        for url, title, text in rows
        if url or title or text
    ]
    for rank, chunk in enumerate(kept, start=1):
        chunk["rank"] = rank
    # One validation call for the list: half the CPU of one Chunk(...) per row.
    return _CHUNK_LIST.validate_python(kept)


def listed_sources(body: Any, field: str, text_field: str) -> list[dict[str, Any]]:
    """The sources an answer cites as {url, title, text}, from the list at `field` (in order)."""
    return [
        {"url": c.get("url"), "title": c.get("title"), "text": c.get(text_field)}
        for c in objects_at(body, field)
    ]
