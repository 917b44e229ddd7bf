"""Reading vendor documents: small helpers the research modules share.

Unlike the search normalisers, these are strict where it matters: a completed run whose report
field is missing or not text raises `VendorShapeError` (the attempt fails with
error_class "malformed_body" and the raw body is in the log), while an empty string is a valid
document (the driver turns it into `empty_output`). Citations are kept exactly as given: in
order, duplicates included, titles as sent ("" when absent); entries without a URL are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from collectors.draco.systems.driver import VendorShapeError
from warehouse.events import ReportCitation


def obj(document: Any, *path: str) -> Any:
    """The value at `path` inside nested objects, or None."""
    node = document
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def objects(value: Any) -> list[dict[str, Any]]:
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def require_object(document: Any, what: str) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise VendorShapeError(f"{what}: expected a JSON object, got {type(document).__name__}")
    return document


def require_text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise VendorShapeError(f"{what}: expected text, got {type(value).__name__}")
    return value


def first_string(document: Any, *keys: str) -> str | None:
    if isinstance(document, dict):
        for key in keys:
            value = document.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, int) and not isinstance(value, bool):
                return str(value)
    return None


def citation(
    entry: dict[str, Any], url_key: str = "url", title_key: str = "title"
) -> ReportCitation:
    url = entry.get(url_key)
    title = entry.get(title_key)
    return ReportCitation(url=url, title=title if isinstance(title, str) else "")


def citations(entries: Iterable[dict[str, Any]]) -> tuple[ReportCitation, ...]:
    return tuple(
        citation(entry) for entry in entries if isinstance(entry.get("url"), str) and entry["url"]
    )


def number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def count(value: Any) -> int:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0


def billed(amount: Any) -> tuple[float | None, str | None]:
    """(cost, "billed") when the vendor reported a positive amount, else (None, None)."""
    value = number(amount)
    if value is None or value <= 0:
        return None, None
    return value, "billed"


def error_message(document: Any) -> str:
    """A vendor's failure detail: `error` as a string, or `error.message`; "" when absent."""
    error = document.get("error") if isinstance(document, dict) else None
    return error if isinstance(error, str) else first_string(error, "message") or ""
