"""What a vendor extraction response says about one URL, whatever its wire shape (the JSON is
read with collectors.http.json_fields, the one set of readers every family uses)."""

from __future__ import annotations

from dataclasses import dataclass, field

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
