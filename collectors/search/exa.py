"""Exa search: POST {base}/search, `x-api-key: <key>`.

Body: query, type (auto | fast: one lane each), numResults, contents.summary=true. Chunk text =
`summary`. A result without a summary is kept with empty text (the ref-harness dropped it,
which silently cost the lane a ranked URL). Request id: `requestId` in the body (also on error
bodies, per Exa's error-code docs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.vendor_truth import SdkCheck
from collectors.search.common import body_string, objects_at, ranked_chunks, string
from warehouse.events import Chunk

PROVIDER = "exa"
# Request and parser held against the SDK's serialiser and response models
# (tests/providers/test_vendor_contracts.py).
SDK_CHECK = SdkCheck(
    package="exa-py",
    version="2.27.0",
    docs="https://docs.exa.ai/reference/search",
    checked_on="2026-12-01",
)
KEY_ENV = "EXA_API_KEY"
BASE_URL = "https://api.exa.ai"
SEARCH_PATH = "/search"
NORMALIZER_VERSION = "exa_search@1"
PRICE_USD_PER_1K = 7.00  # auto and fast are billed alike


def build_request(
    base_url: str, api_key: str, query: str, max_results: int, *, search_type: str
) -> ProviderRequest:
    return ProviderRequest(
        method="POST",
        url=f"{base_url.rstrip('/')}{SEARCH_PATH}",
        headers={"x-api-key": api_key, "Accept": "application/json"},
        json_body={
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
    return body_string(document, "requestId") or request_id_from_headers(headers, document)
