"""Reading fields out of a vendor's JSON body: the one set of helpers every provider client
(search lanes, research systems, live extraction engines) reads vendor documents with.

They never raise on an unexpected shape: a missing or mistyped node is None / empty, a
non-object list entry is skipped. Where a family must be strict (a research report with no text
is a malformed body), it checks the value these return and raises its own error.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any

_TAG = re.compile(r"<[^>]+>")


def parse_body(raw_body: str) -> Any:
    """The stored raw body as JSON, or None when it is not JSON."""
    try:
        return json.loads(raw_body)
    except ValueError:
        return None


def at(document: Any, *path: str) -> Any:
    """The value at `path` inside nested objects, or None (`document` itself for no path)."""
    node = document
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def object_or_empty(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def objects(value: Any) -> list[dict[str, Any]]:
    """The JSON objects in a list, in order; [] when `value` is not a list."""
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def objects_at(document: Any, *path: str) -> list[dict[str, Any]]:
    """The list at `path` inside `document`, keeping only its JSON objects."""
    return objects(at(document, *path))


def string(value: Any) -> str:
    """A string field stripped; "" when it is not a string."""
    return value.strip() if isinstance(value, str) else ""


def strings(values: Any) -> list[str]:
    """The non-empty strings of a list, stripped."""
    if not isinstance(values, list):
        return []
    return [s for s in (string(v) for v in values) if s]


def text_or_none(value: Any) -> str | None:
    """A string with something in it, as sent (not stripped); else None."""
    return value if isinstance(value, str) and value.strip() else None


def html_to_text(fragment: str) -> str:
    """Drop inline markup (<strong> highlights) and decode entities."""
    return html.unescape(_TAG.sub("", fragment)).strip()


def first_nonempty_string(document: Any, *keys: str) -> str | None:
    """The first of `keys` holding a non-empty string at the top of a JSON object."""
    return _first(document, keys, lambda value: value if isinstance(value, str) else None)


def first_text(document: Any, *keys: str) -> str | None:
    """The first of `keys` holding a non-empty string, or an integer as text (ids, statuses)."""
    return _first(document, keys, _text_or_int)


def _text_or_int(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _first(
    document: Any, keys: tuple[str, ...], as_text: Callable[[Any], str | None]
) -> str | None:
    if isinstance(document, dict):
        for key in keys:
            text = as_text(document.get(key))
            if text:
                return text
    return None


def number(value: Any) -> float | None:
    """A JSON number (not a boolean) as a float; else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def count(value: Any) -> int:
    """A JSON integer (not a boolean); else 0."""
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0


def int_or_none(value: Any) -> int | None:
    """A JSON number (not a boolean) truncated to an int; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value)
    return None


def for_url(entries: list[dict[str, Any]], url: str, key: str = "url") -> dict[str, Any] | None:
    """The entry about `url` in a batch response (the only one, for a one-URL request)."""
    for entry in entries:
        if entry.get(key) == url:
            return entry
    return entries[0] if len(entries) == 1 else None
