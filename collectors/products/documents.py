"""Reading research documents: the strict checks and citation shapes the research modules share
(plain JSON field reading is collectors.http.json_fields, one module for every family).

Unlike the search normalisers, these are strict where it matters: a completed run whose report
field is missing or not text raises `VendorShapeError` (the attempt fails with
error_class "malformed_body" and the raw body is in the log), while an empty string is a valid
document (the driver turns it into `empty_output`). Citations are kept exactly as given: in
order, duplicates included, titles as sent ("" when absent); entries without a URL are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from collectors.http.json_fields import first_text, number
from collectors.products.research import VendorShapeError
from warehouse.events import ReportCitation


def require_object(document: Any, what: str) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise VendorShapeError(f"{what}: expected a JSON object, got {type(document).__name__}")
    return document


def require_text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise VendorShapeError(f"{what}: expected text, got {type(value).__name__}")
    return value


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


def billed(amount: Any) -> tuple[float | None, str | None]:
    """(cost, "billed") when the vendor reported a positive amount, else (None, None)."""
    value = number(amount)
    if value is None or value <= 0:
        return None, None
    return value, "billed"


def error_message(document: Any) -> str:
    """A vendor's failure detail: `error` as a string, or `error.message`; "" when absent."""
    error = document.get("error") if isinstance(document, dict) else None
    return error if isinstance(error, str) else first_text(error, "message") or ""
