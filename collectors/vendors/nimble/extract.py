"""Nimble Extract: POST {base}/v2/extract, `Authorization: Bearer <key>`.

Request: `url`, `render` (true | false | "auto": the render routing), `formats: ["markdown"]`.
Response (`ExtractRunResponse`): `status` (success | skipped | fatal | error | postponed |
ignored | rejected | blocked), `task_id`, `url` (the final URL), `status_code` (the target's),
`data.markdown`, `data.redirects[] {status_code, url}`, `metadata.driver` (what fetched it; our
record of the render path used).
"""

from __future__ import annotations

from typing import Any

from collectors.http import ProviderRequest
from collectors.http.json_fields import int_or_none, object_or_empty, objects, text_or_none
from collectors.products.extract import VendorRead

# The vendor's identity and this product's price, read by the engine registry as module names.
from collectors.vendors.nimble import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK  # noqa: F401
from collectors.vendors.nimble import EXTRACT_PRICE_BASIS as PRICE_BASIS  # noqa: F401
from collectors.vendors.nimble import EXTRACT_PRICE_SNAPSHOT as PRICE_SNAPSHOT  # noqa: F401
from collectors.vendors.nimble import EXTRACT_USD_PER_1K as PRICE_USD_PER_1K  # noqa: F401
from warehouse.events import RedirectHop

PATH = "/v2/extract"
DOCS = "https://docs.nimbleway.com/api-reference/extract/extract.md"
# Checked in the SDK source: (resources/extract/extract.py `run`, types/extract_run_response.py)
SDK_CHECK = SDK.check(docs=DOCS)
RENDER = {"fast": False, "full": True, "auto": "auto"}
FAILED_STATES = {"skipped", "fatal", "error", "postponed", "ignored", "rejected", "blocked"}


def build_request(base_url: str, api_key: str, url: str, render: str) -> ProviderRequest:
    return AUTH.post(
        base_url, PATH, api_key, {"url": url, "render": RENDER[render], "formats": ["markdown"]}
    )


def read(document: Any, url: str) -> VendorRead:
    body = object_or_empty(document)
    data = object_or_empty(body.get("data"))
    state = body.get("status")
    redirects = [
        RedirectHop(
            url=str(hop.get("url", "")), status_code=int_or_none(hop.get("status_code")) or 0
        )
        for hop in objects(data.get("redirects"))
    ]
    failed = state in FAILED_STATES
    return VendorRead(
        text=None if failed else text_or_none(data.get("markdown")),
        target_status_code=int_or_none(body.get("status_code")),
        final_url=body.get("url") if isinstance(body.get("url"), str) else None,
        redirect_chain=redirects,
        render_used=text_or_none(object_or_empty(body.get("metadata")).get("driver")),
        error_class=f"vendor_{state}" if failed else None,
        error_message=f"task status {state}" if failed else None,
    )
