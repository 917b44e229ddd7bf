"""Tavily search: POST {base}/search, `Authorization: Bearer <key>`.

Body: query, search_depth (basic | fast: one lane each), include_answer=false, max_results.
Chunk text = `content` (the snippet; `raw_content` is not requested). Request id: `request_id`
in the body when present (not confirmed for every API version).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import first_nonempty_string, objects_at, string
from collectors.products.chunks import ranked_chunks
from collectors.products.search import STANDARD_POLICY, LaneSpec
from collectors.vendors.tavily import ABORT_STATUSES, AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK
from collectors.vendors.tavily import SEARCH_USD_PER_1K as PRICE_USD_PER_1K
from warehouse.events import Chunk

# Request and parser held against the SDK's serialiser and response models
# (tests/providers/test_vendor_contracts.py).
SDK_CHECK = SDK.check(docs="https://docs.tavily.com/documentation/api-reference/endpoint/search")
SEARCH_PATH = "/search"
NORMALIZER_VERSION = "tavily_search@1"


def build_request(
    base_url: str, api_key: str, query: str, max_results: int, *, search_depth: str
) -> ProviderRequest:
    return AUTH.post(
        base_url,
        SEARCH_PATH,
        api_key,
        {
            "query": query,
            "search_depth": search_depth,
            "include_answer": False,
            "max_results": max_results,
        },
    )


def normalize(document: Any) -> list[Chunk]:
    return ranked_chunks(
        (string(r.get("url")), string(r.get("title")), string(r.get("content")))
        for r in objects_at(document, "results")
    )


def vendor_request_id(headers: Mapping[str, str], document: Any) -> str | None:
    return first_nonempty_string(document, "request_id") or request_id_from_headers(
        headers, document
    )


# --- the lanes this module backs (collectors.products.search) -----------------------------------


LANES = tuple(
    LaneSpec(
        lane=f"tavily_search_{depth}",
        provider=PROVIDER,
        key_env=KEY_ENV,
        base_url=BASE_URL,
        price_usd_per_1k=PRICE_USD_PER_1K,
        rate_per_s=1.0,
        rate_group="tavily",
        concurrency=4,
        build_request=partial(build_request, search_depth=depth),
        normalize=normalize,
        normalizer_version=NORMALIZER_VERSION,
        vendor_request_id=vendor_request_id,
        policy=STANDARD_POLICY.with_overrides(extra_abort_statuses=ABORT_STATUSES),
        settings={"search_depth": depth, "include_answer": False},
    )
    for depth in ("basic", "fast")
)
