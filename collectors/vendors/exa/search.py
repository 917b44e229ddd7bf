"""Exa search: POST {base}/search, `x-api-key: <key>`.

Body: query, type (auto | fast: one lane each), numResults, contents.summary=true. Chunk text =
`summary`. A result without a summary is kept with empty text (the ref-harness dropped it,
which silently cost the lane a ranked URL). Request id: `requestId` in the body (also on error
bodies, per Exa's error-code docs).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import first_nonempty_string, objects_at, string
from collectors.products.chunks import ranked_chunks
from collectors.products.search import LaneSpec
from collectors.vendors.exa import (
    AUTH,
    BASE_URL,
    KEY_ENV,
    PROVIDER,
    SDK,
)
from collectors.vendors.exa import SEARCH_USD_PER_1K as PRICE_USD_PER_1K
from warehouse.events import Chunk

# Request and parser held against the SDK's serialiser and response models
# (tests/providers/test_vendor_contracts.py).
SDK_CHECK = SDK.check(docs="https://docs.exa.ai/reference/search")
SEARCH_PATH = "/search"
NORMALIZER_VERSION = "exa_search@1"


def build_request(
    base_url: str, api_key: str, query: str, max_results: int, *, search_type: str
) -> ProviderRequest:
    return AUTH.post(
        base_url,
        SEARCH_PATH,
        api_key,
        {
            "query": query,
            "type": search_type,
            "numResults": max_results,
            "contents": {"summary": True},
        },
    )


def normalize(document: Any) -> list[Chunk]:
    return ranked_chunks(
        (string(r.get("url")), string(r.get("title")), string(r.get("summary")))
        for r in objects_at(document, "results")
    )


def vendor_request_id(headers: Mapping[str, str], document: Any) -> str | None:
    return first_nonempty_string(document, "requestId") or request_id_from_headers(
        headers, document
    )


# --- the lanes this module backs (collectors.products.search) -----------------------------------


LANES = tuple(
    LaneSpec(
        lane=f"exa_search_{search_type}",
        provider=PROVIDER,
        key_env=KEY_ENV,
        base_url=BASE_URL,
        price_usd_per_1k=PRICE_USD_PER_1K,
        rate_per_s=9.0,
        rate_group="exa",
        concurrency=16,
        build_request=partial(build_request, search_type=search_type),
        normalize=normalize,
        normalizer_version=NORMALIZER_VERSION,
        vendor_request_id=vendor_request_id,
        settings={"type": search_type, "contents": {"summary": True}},
    )
    for search_type in ("auto", "fast")
)
