"""Firecrawl scrape: POST {base}/v2/scrape, `Authorization: Bearer fc-…`.

Request: `url`, `formats: ["markdown"]`, `onlyMainContent: true`, `maxAge: 0` (fresh fetch, no
2-day cache), `timeout` ms. Firecrawl renders in a browser on every request; it reports no
render path, so render_used stays None. Response: `success`, `data.markdown`,
`data.metadata {sourceURL, url, statusCode (the target's), error, cacheState, proxyUsed,
creditsUsed}`; a failure is `success: false` + `error`.
"""

from __future__ import annotations

from typing import Any

from collectors.extraction.live.vendors.common import VendorRead, int_or_none, obj, text_or_none
from collectors.http import ProviderRequest
from collectors.http.vendor_truth import SdkCheck

PROVIDER = "firecrawl"
KEY_ENV = "FIRECRAWL_API_KEY"
BASE_URL = "https://api.firecrawl.dev"
PATH = "/v2/scrape"
DOCS = "https://docs.firecrawl.dev/advanced-scraping-guide"
# Checked in the SDK source: (v2/methods/scrape.py, v2/types.py DocumentMetadata, v2/utils/normalize.py)
SDK_CHECK = SdkCheck(package="firecrawl-py", version="4.54.0", docs=DOCS, checked_on="2026-12-01")
PRICE_USD_PER_1K: float | None = (
    0.99  # 1 credit/page at the Standard plan rate (providers.md §3, derived)
)
PRICE_BASIS = "1 credit per page, Standard plan $99/100k credits (derived)"
PRICE_SNAPSHOT = "2026-12-01"
SERVER_TIMEOUT_MS = 30_000


def build_request(base_url: str, api_key: str, url: str, render: str) -> ProviderRequest:
    return ProviderRequest(
        method="POST",
        url=f"{base_url.rstrip('/')}{PATH}",
        headers={"Authorization": f"Bearer {api_key}", "Accept": "application/json"},
        json_body={
            "url": url,
            "formats": ["markdown"],
            "onlyMainContent": True,
            "maxAge": 0,
            "timeout": SERVER_TIMEOUT_MS,
        },
    )


def read(document: Any, url: str) -> VendorRead:
    body = obj(document)
    data = obj(body.get("data"))
    metadata = obj(data.get("metadata"))
    error = text_or_none(body.get("error")) or text_or_none(metadata.get("error"))
    failed = body.get("success") is False
    return VendorRead(
        text=None if failed else text_or_none(data.get("markdown")),
        target_status_code=int_or_none(metadata.get("statusCode")),
        final_url=text_or_none(metadata.get("url")) or text_or_none(metadata.get("sourceURL")),
        render_used=None,
        error_class="vendor_error" if failed else None,
        error_message=error if failed else None,
    )
