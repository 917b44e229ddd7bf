"""Tavily extract: POST {base}/extract, `Authorization: Bearer <key>`.

Request: `urls: [url]`, `extract_depth: basic | advanced` (advanced renders JavaScript: the
render route; two lanes), `format: "markdown"`, `include_usage: true`. Response: `results[]
{url, raw_content}`, `failed_results[] {url, error}`, `response_time`, `usage.credits`.
"""

from __future__ import annotations

from typing import Any

from collectors.extraction.live.vendors.common import (
    VendorRead,
    for_url,
    obj,
    objects,
    text_or_none,
)
from collectors.http import ProviderRequest
from collectors.http.vendor_truth import SdkCheck

PROVIDER = "tavily"
KEY_ENV = "TAVILY_API_KEY"
BASE_URL = "https://api.tavily.com"
PATH = "/extract"
DOCS = "https://docs.tavily.com/examples/quick-tutorials/extract-api"
# Checked in the SDK source: (tavily.py TavilyClient._extract / extract)
SDK_CHECK = SdkCheck(package="tavily-python", version="0.8.5", docs=DOCS, checked_on="2026-12-01")
# basic 1 credit / 5 URLs, advanced 2 credits / 5 URLs at $0.008/credit (providers.md §3, derived)
PRICE_USD_PER_1K: dict[str, float | None] = {"basic": 1.60, "advanced": 3.20}
PRICE_BASIS = "credits per 5 URLs at $0.008/credit (derived); failed URLs assumed billed"
PRICE_SNAPSHOT = "2026-12-01"
RENDER_USED = {"basic": "fast", "advanced": "full"}


def build_request(base_url: str, api_key: str, url: str, depth: str) -> ProviderRequest:
    return ProviderRequest(
        method="POST",
        url=f"{base_url.rstrip('/')}{PATH}",
        headers={"Authorization": f"Bearer {api_key}", "Accept": "application/json"},
        json_body={
            "urls": [url],
            "extract_depth": depth,
            "format": "markdown",
            "include_usage": True,
        },
    )


def read(document: Any, url: str, depth: str) -> VendorRead:
    body = obj(document)
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
