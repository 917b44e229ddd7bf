"""Firecrawl search: POST {base}/v2/search, `Authorization: Bearer <key>`.

Body: query, limit, sources=[{"type": "web"}], timeout (ms); no scrape options: snippets only, like the
other SERP lanes. Chunk text = `description`. Results live under `data.web` (v2 REST); a bare
top-level `web` (the SDK's flattened shape) is read too. Request id: `id` in the body when
present (not documented for search).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import first_nonempty_string, objects_at, string
from collectors.products.chunks import ranked_chunks
from collectors.products.search import PATIENT_POLICY, LaneSpec
from collectors.vendors.firecrawl import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK
from collectors.vendors.firecrawl import SEARCH_USD_PER_1K as PRICE_USD_PER_1K
from warehouse.events import Chunk

# Request and parser held against the SDK's serialiser and response models
# (tests/providers/test_vendor_contracts.py).
SDK_CHECK = SDK.check(docs="https://docs.firecrawl.dev/api-reference/endpoint/search")
SEARCH_PATH = "/v2/search"
# @2: source objects (`sources: [{"type": "web"}]`, the SDK's wire form) and `success: false`
# read as a failure; @1 sent `sources: ["web"]`.
NORMALIZER_VERSION = "firecrawl_search@2"
# Firecrawl's own budget, below our 60 s attempt deadline so it answers before we give up.
SERVER_TIMEOUT_MS = 55_000


def build_request(base_url: str, api_key: str, query: str, max_results: int) -> ProviderRequest:
    return AUTH.post(
        base_url,
        SEARCH_PATH,
        api_key,
        {
            "query": query,
            "limit": max_results,
            # The SDK's own wire form (firecrawl-py 4.54.0 sends source objects, not strings).
            "sources": [{"type": "web"}],
            "timeout": SERVER_TIMEOUT_MS,
        },
    )


def normalize(document: Any) -> list[Chunk]:
    results = objects_at(document, "data", "web") or objects_at(document, "web")
    return ranked_chunks(
        (string(r.get("url")), string(r.get("title")), string(r.get("description")))
        for r in results
    )


def body_failure(document: Any) -> str | None:
    """A 200 without `success: true` is a failed search, not zero results: firecrawl-py v2
    `methods/search.py` raises on `not response_data.get("success")` (a missing flag too), with
    the body's `error` (and `code`) as the message."""
    if isinstance(document, dict) and document.get("success"):
        return None
    if not isinstance(document, dict):
        return "body is not a JSON object"
    error = document.get("error") or "success is not true"
    code = document.get("code")
    return f"{error} ({code})" if code else str(error)


def vendor_request_id(headers: Mapping[str, str], document: Any) -> str | None:
    return first_nonempty_string(document, "id") or request_id_from_headers(headers, document)


# --- the lanes this module backs (collectors.products.search) -----------------------------------


LANES = (
    LaneSpec(
        lane="firecrawl_search",
        provider=PROVIDER,
        key_env=KEY_ENV,
        base_url=BASE_URL,
        price_usd_per_1k=PRICE_USD_PER_1K,
        rate_per_s=1.0,
        rate_group="firecrawl",
        concurrency=4,
        build_request=build_request,
        normalize=normalize,
        normalizer_version=NORMALIZER_VERSION,
        vendor_request_id=vendor_request_id,
        body_failure=body_failure,
        policy=PATIENT_POLICY,
        settings={
            "sources": [{"type": "web"}],
            "scrape": False,
            "timeout_ms": SERVER_TIMEOUT_MS,
        },
    ),
)
