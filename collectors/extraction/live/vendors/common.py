"""What a vendor extraction response says about one URL, whatever its wire shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from warehouse.events import RedirectHop


@dataclass(frozen=True)
class VendorRead:
    text: str | None  # the extracted content; None when the vendor returned none
    target_status_code: int | None = None  # the origin's status, when the vendor reports it
    final_url: str | None = None
    redirect_chain: list[RedirectHop] = field(default_factory=list)
    render_used: str | None = None  # as reported; None when the vendor does not say
    error_class: str | None = None  # a per-URL failure reported inside a 2xx response
    error_message: str | None = None


def obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def objects(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def int_or_none(value: Any) -> int | None:
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
