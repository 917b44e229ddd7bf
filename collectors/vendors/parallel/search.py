"""Parallel search: POST {base}/v1/search, `x-api-key: <key>`.

Body: objective=q, search_queries=[q], mode (basic | turbo: one lane each),
advanced_settings.max_results. Chunk text = the `excerpts`, one per line. Request id:
`search_id` in the body.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import (
    first_nonempty_string,
    objects_at,
    string,
    strings,
)
from collectors.products.chunks import join_snippets, ranked_chunks
from collectors.products.search import LaneSpec
from collectors.vendors.parallel import (
    AUTH,
    BASE_URL,
    KEY_ENV,
    PROVIDER,
    SDK,
)
from collectors.vendors.parallel import SEARCH_USD_PER_1K as PRICE_USD_PER_1K
from warehouse.events import Chunk

# Request and parser held against the SDK's serialiser and response models
# (tests/providers/test_vendor_contracts.py).
SDK_CHECK = SDK.check(docs="https://docs.parallel.ai/api-reference/search/search")
SEARCH_PATH = "/v1/search"
NORMALIZER_VERSION = "parallel_search@1"


def build_request(
    base_url: str, api_key: str, query: str, max_results: int, *, mode: str
) -> ProviderRequest:
    return AUTH.post(
        base_url,
        SEARCH_PATH,
        api_key,
        {
            "objective": query,
            "search_queries": [query],
            "mode": mode,
            "advanced_settings": {"max_results": max_results},
        },
    )


def normalize(document: Any) -> list[Chunk]:
    return ranked_chunks(
        (string(r.get("url")), string(r.get("title")), join_snippets(strings(r.get("excerpts"))))
        for r in objects_at(document, "results")
    )


def vendor_request_id(headers: Mapping[str, str], document: Any) -> str | None:
    return first_nonempty_string(document, "search_id") or request_id_from_headers(
        headers, document
    )


# --- the lanes this module backs (collectors.products.search) -----------------------------------


LANES = tuple(
    LaneSpec(
        lane=f"parallel_search_{mode}",
        provider=PROVIDER,
        key_env=KEY_ENV,
        base_url=BASE_URL,
        price_usd_per_1k=PRICE_USD_PER_1K[mode],
        rate_per_s=9.0,
        rate_group="parallel",
        concurrency=16,
        build_request=partial(build_request, mode=mode),
        normalize=normalize,
        normalizer_version=NORMALIZER_VERSION,
        vendor_request_id=vendor_request_id,
        settings={"mode": mode},
    )
    for mode in ("basic", "turbo")
)
