"""Firecrawl scrape: POST {base}/v2/scrape, `Authorization: Bearer fc-…`.

Request: `url`, `formats: ["markdown"]`, `onlyMainContent: true`, `maxAge: 0` (fresh fetch, no
2-day cache), `timeout` ms. Firecrawl renders in a browser on every request; it reports no
render path, so render_used stays None. Response: `success`, `data.markdown`,
`data.metadata {sourceURL, url, statusCode (the target's), error, cacheState, proxyUsed,
creditsUsed}`; a failure is `success: false` + `error`.
"""

from __future__ import annotations

from typing import Any

from collectors.http import ProviderRequest
from collectors.http.json_fields import int_or_none, object_or_empty, text_or_none
from collectors.products.extract import VendorRead

# The vendor's identity and this product's price, read by the engine registry as module names.
from collectors.vendors.firecrawl import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK  # noqa: F401
from collectors.vendors.firecrawl import SCRAPE_PRICE_BASIS as PRICE_BASIS  # noqa: F401
from collectors.vendors.firecrawl import SCRAPE_PRICE_SNAPSHOT as PRICE_SNAPSHOT  # noqa: F401
from collectors.vendors.firecrawl import SCRAPE_USD_PER_1K as PRICE_USD_PER_1K  # noqa: F401

PATH = "/v2/scrape"
DOCS = "https://docs.firecrawl.dev/advanced-scraping-guide"
# Checked in the SDK source: (v2/methods/scrape.py, v2/types.py DocumentMetadata, v2/utils/normalize.py)
SDK_CHECK = SDK.check(docs=DOCS)
SERVER_TIMEOUT_MS = 30_000


def build_request(base_url: str, api_key: str, url: str, render: str) -> ProviderRequest:
    return AUTH.post(
        base_url,
        PATH,
        api_key,
        {
            "url": url,
            "formats": ["markdown"],
            "onlyMainContent": True,
            "maxAge": 0,
            "timeout": SERVER_TIMEOUT_MS,
        },
    )


def read(document: Any, url: str) -> VendorRead:
    body = object_or_empty(document)
    data = object_or_empty(body.get("data"))
    metadata = object_or_empty(data.get("metadata"))
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
