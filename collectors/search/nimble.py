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
from collectors.http.vendor_truth import SdkCheck
from collectors.search.common import (
    body_string,
    join_snippets,
    objects_at,
    ranked_chunks,
    string,
    strings,
)
from warehouse.events import Chunk

PROVIDER = "nimble"
# Request and parser held against the SDK's serialiser and response models
# (tests/providers/test_vendor_contracts.py).
SDK_CHECK = SdkCheck(
    package="nimble-python",
    version="1.6.0",
    docs="https://docs.nimbleway.com/api-reference/search/search",
    checked_on="2026-12-01",
)
KEY_ENV = "NIMBLE_API_KEY"
BASE_URL = "https://sdk.nimbleway.com"
SEARCH_PATH = "/v2/search"
HEALTHCHECK_PATH = "/v2/healthcheck"  # 200 or 404 both mean "host reachable" (ref-harness)
NORMALIZER_VERSION = "nimble_search@1"
# `standard` is the current name of the Search tier (`fast` is its deprecated alias).
SEARCH_DEPTH = "standard"
PRICE_USD_PER_1K = 5.00  # Search tier; unconfirmed at source (Lite tier: 1.10)
RETRYABLE_EXTRA = frozenset({409})


def build_request(base_url: str, api_key: str, query: str, max_results: int) -> ProviderRequest:
    return ProviderRequest(
        method="POST",
        url=f"{base_url.rstrip('/')}{SEARCH_PATH}",
        headers={"Authorization": f"Bearer {api_key}", "Accept": "application/json"},
        json_body={
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
    return body_string(document, "request_id") or request_id_from_headers(headers, document)
