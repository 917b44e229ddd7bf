"""Exa contents: POST {base}/contents, `x-api-key`.

Request: `urls: [url]`, `text: {maxCharacters}`, `maxAgeHours: 0` (always live-crawl). Per-URL
failures arrive inside a 200 response: `statuses[] {id, status, source, error {tag,
httpStatusCode}}`; content in `results[] {url, id, title, text}`; `costDollars.total`.
Exa reports no render path.
"""

from __future__ import annotations

from typing import Any

from collectors.http import ProviderRequest
from collectors.http.json_fields import for_url, int_or_none, object_or_empty, objects, text_or_none
from collectors.products.extract import VendorRead

# The vendor's identity and this product's price, read by the engine registry as module names.
from collectors.vendors.exa import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK  # noqa: F401
from collectors.vendors.exa import CONTENTS_PRICE_BASIS as PRICE_BASIS  # noqa: F401
from collectors.vendors.exa import CONTENTS_PRICE_SNAPSHOT as PRICE_SNAPSHOT  # noqa: F401
from collectors.vendors.exa import CONTENTS_USD_PER_1K as PRICE_USD_PER_1K  # noqa: F401

PATH = "/contents"
DOCS = "https://exa.ai/docs/reference/contents-api-guide-for-coding-agents"
# Checked in the SDK source: (api.py get_contents, ContentStatus, CostDollars)
SDK_CHECK = SDK.check(docs=DOCS)
MAX_CHARACTERS = 200_000


def build_request(base_url: str, api_key: str, url: str, render: str) -> ProviderRequest:
    return AUTH.post(
        base_url,
        PATH,
        api_key,
        {"urls": [url], "text": {"maxCharacters": MAX_CHARACTERS}, "maxAgeHours": 0},
    )


def read(document: Any, url: str) -> VendorRead:
    body = object_or_empty(document)
    status = for_url(objects(body.get("statuses")), url, key="id") or {}
    error = object_or_empty(status.get("error"))
    result = for_url(objects(body.get("results")), url) or {}
    failed = status.get("status") == "error" or not result
    return VendorRead(
        text=None if failed else text_or_none(result.get("text")),
        target_status_code=int_or_none(error.get("httpStatusCode")),  # reported on errors only
        final_url=text_or_none(result.get("url")),
        error_class=f"vendor_{error.get('tag') or 'error'}" if failed else None,
        error_message=(f"status {status.get('status')}: {error.get('tag')}" if failed else None),
    )
