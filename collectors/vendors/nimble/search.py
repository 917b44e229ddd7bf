"""Nimble search: POST {base}/v2/search, `Authorization: Bearer <key>`.

Body: query, max_results, search_depth, include_answer=false (the answer is synthesised by us,
the same way for every lane). Chunk text = `description` (or `content` when the description is
empty), then each of `extra_snippets`, one per line. `content` is the full page only when
`full_content` is requested, which this snippet lane never does. nimble-python 1.6.0's `Result`
model has no `extra_snippets` (url, title, description, content, metadata, additional_data):
they are read only if the API sends them anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import first_nonempty_string, objects_at, string, strings
from collectors.products.chunks import join_snippets, ranked_chunks
from collectors.products.search import STANDARD_POLICY, LaneSpec
from collectors.vendors.nimble import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK
from collectors.vendors.nimble import SEARCH_USD_PER_1K as PRICE_USD_PER_1K
from warehouse.events import Chunk

# Request and parser held against the SDK's serialiser and response models
# (tests/providers/test_vendor_contracts.py).
SDK_CHECK = SDK.check(docs="https://docs.nimbleway.com/api-reference/search/search")
SEARCH_PATH = "/v2/search"
HEALTHCHECK_PATH = "/v2/healthcheck"  # 200 or 404 both mean "host reachable" (ref-harness)
NORMALIZER_VERSION = "nimble_search@1"
# `standard` is the current name of the Search tier (`fast` is its deprecated alias).
SEARCH_DEPTH = "standard"
RETRYABLE_EXTRA = frozenset({409})


def build_request(base_url: str, api_key: str, query: str, max_results: int) -> ProviderRequest:
    return AUTH.post(
        base_url,
        SEARCH_PATH,
        api_key,
        {
            "query": query,
            "max_results": max_results,
            "search_depth": SEARCH_DEPTH,
            "include_answer": False,
        },
    )


def normalize(document: Any) -> list[Chunk]:
    rows = []
    for result in objects_at(document, "results"):
        lead = string(result.get("description")) or string(result.get("content"))
        text = join_snippets([lead, *strings(result.get("extra_snippets"))])
        rows.append((string(result.get("url")), string(result.get("title")), text))
    return ranked_chunks(rows)


def vendor_request_id(headers: Mapping[str, str], document: Any) -> str | None:
    return first_nonempty_string(document, "request_id") or request_id_from_headers(
        headers, document
    )


# --- the lanes this module backs (collectors.products.search) -----------------------------------


LANES = (
    LaneSpec(
        lane="nimble_search",
        provider=PROVIDER,
        key_env=KEY_ENV,
        base_url=BASE_URL,
        price_usd_per_1k=PRICE_USD_PER_1K,
        rate_per_s=9.0,
        rate_group="nimble:search_standard",  # Nimble limits per product (search depth)
        concurrency=16,
        build_request=build_request,
        normalize=normalize,
        normalizer_version=NORMALIZER_VERSION,
        vendor_request_id=vendor_request_id,
        policy=STANDARD_POLICY.with_overrides(extra_retryable_statuses=RETRYABLE_EXTRA),
        settings={"search_depth": SEARCH_DEPTH, "include_answer": False},
        healthcheck_path=HEALTHCHECK_PATH,
    ),
)
