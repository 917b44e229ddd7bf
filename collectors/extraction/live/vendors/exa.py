"""Exa contents: POST {base}/contents, `x-api-key`.

Request: `urls: [url]`, `text: {maxCharacters}`, `maxAgeHours: 0` (always live-crawl). Per-URL
failures arrive inside a 200 response: `statuses[] {id, status, source, error {tag,
httpStatusCode}}`; content in `results[] {url, id, title, text}`; `costDollars.total`.
Exa reports no render path.
"""

from __future__ import annotations

from typing import Any

from collectors.extraction.live.vendors.common import (
    VendorRead,
    for_url,
    int_or_none,
    obj,
    objects,
    text_or_none,
)
from collectors.http import ProviderRequest
from collectors.http.vendor_truth import SdkCheck

PROVIDER = "exa"
KEY_ENV = "EXA_API_KEY"
BASE_URL = "https://api.exa.ai"
PATH = "/contents"
DOCS = "https://exa.ai/docs/reference/contents-api-guide-for-coding-agents"
# Checked in the SDK source: (api.py get_contents, ContentStatus, CostDollars)
SDK_CHECK = SdkCheck(package="exa-py", version="2.27.0", docs=DOCS, checked_on="2026-12-01")
PRICE_USD_PER_1K: float | None = None  # providers.md §3: unknown — verify (costDollars is per call)
PRICE_BASIS = "unknown: no list price recorded"
PRICE_SNAPSHOT = "2026-12-01"
MAX_CHARACTERS = 200_000


def build_request(base_url: str, api_key: str, url: str, render: str) -> ProviderRequest:
    return ProviderRequest(
        method="POST",
        url=f"{base_url.rstrip('/')}{PATH}",
        headers={"x-api-key": api_key, "Accept": "application/json"},
        json_body={"urls": [url], "text": {"maxCharacters": MAX_CHARACTERS}, "maxAgeHours": 0},
    )


def read(document: Any, url: str) -> VendorRead:
    body = obj(document)
    status = for_url(objects(body.get("statuses")), url, key="id") or {}
    error = obj(status.get("error"))
    result = for_url(objects(body.get("results")), url) or {}
    failed = status.get("status") == "error" or not result
    return VendorRead(
        text=None if failed else text_or_none(result.get("text")),
        target_status_code=int_or_none(error.get("httpStatusCode")),  # reported on errors only
        final_url=text_or_none(result.get("url")),
        error_class=f"vendor_{error.get('tag') or 'error'}" if failed else None,
        error_message=(f"status {status.get('status')}: {error.get('tag')}" if failed else None),
    )
