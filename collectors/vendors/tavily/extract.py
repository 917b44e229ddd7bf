"""Tavily extract: POST {base}/extract, `Authorization: Bearer <key>`.

Request: `urls: [url]`, `extract_depth: basic | advanced` (advanced renders JavaScript: the
render route; two lanes), `format: "markdown"`, `include_usage: true`. Response: `results[]
{url, raw_content}`, `failed_results[] {url, error}`, `response_time`, `usage.credits`.
"""

from __future__ import annotations

from typing import Any

from collectors.http import ProviderRequest
from collectors.http.json_fields import for_url, object_or_empty, objects, text_or_none
from collectors.products.extract import VendorRead

# The vendor's identity and this product's price, read by the engine registry as module names.
from collectors.vendors.tavily import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK  # noqa: F401
from collectors.vendors.tavily import EXTRACT_PRICE_BASIS as PRICE_BASIS  # noqa: F401
from collectors.vendors.tavily import EXTRACT_PRICE_SNAPSHOT as PRICE_SNAPSHOT  # noqa: F401
from collectors.vendors.tavily import EXTRACT_USD_PER_1K as PRICE_USD_PER_1K  # noqa: F401

PATH = "/extract"
DOCS = "https://docs.tavily.com/examples/quick-tutorials/extract-api"
# Checked in the SDK source: (tavily.py TavilyClient._extract / extract)
SDK_CHECK = SDK.check(docs=DOCS)
RENDER_USED = {"basic": "fast", "advanced": "full"}


def build_request(base_url: str, api_key: str, url: str, depth: str) -> ProviderRequest:
    return AUTH.post(
        base_url,
        PATH,
        api_key,
        {
            "urls": [url],
            "extract_depth": depth,
            "format": "markdown",
            "include_usage": True,
        },
    )


def read(document: Any, url: str, depth: str) -> VendorRead:
    body = object_or_empty(document)
    result = for_url(objects(body.get("results")), url)
    failure = for_url(objects(body.get("failed_results")), url)
    if result is None:
        return VendorRead(
            text=None,
            render_used=RENDER_USED[depth],
            error_class="vendor_failed_result",
            error_message=str((failure or {}).get("error") or "no result for the URL"),
        )
    return VendorRead(
        text=text_or_none(result.get("raw_content")),
        final_url=text_or_none(result.get("url")),
        render_used=RENDER_USED[depth],
    )
