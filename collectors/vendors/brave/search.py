"""Brave web search: GET {base}/res/v1/web/search, `X-Subscription-Token: <key>`.

Params: q, count, extra_snippets=true, operators=false (the default `true` reads SimpleQA's
quoted titles as exact-match operators and empties ~12 % of the set). Chunk text =
`description` then each of `extra_snippets`, one per line, with Brave's inline <strong>
highlighting removed and entities decoded. Request id: not documented; a response header is
kept if one is sent.

Brave publishes no official Python SDK (so no SDK_CHECK record): the request and parser are
held against the documented examples of the Web Search API reference
(https://api-dashboard.search.brave.com/app/documentation/web-search/query), as of 2026-12-01,
in tests/providers/test_search_clients.py.
"""

from __future__ import annotations

from typing import Any

from collectors.http import ProviderRequest
from collectors.http.json_fields import html_to_text, objects_at, string, strings
from collectors.products.chunks import join_snippets, ranked_chunks
from collectors.products.search import PATIENT_POLICY, LaneSpec
from collectors.vendors.brave import AUTH, BASE_URL, KEY_ENV, PROVIDER
from collectors.vendors.brave import SEARCH_USD_PER_1K as PRICE_USD_PER_1K
from warehouse.events import Chunk

SEARCH_PATH = "/res/v1/web/search"
NORMALIZER_VERSION = "brave_search@1"


def build_request(base_url: str, api_key: str, query: str, max_results: int) -> ProviderRequest:
    return ProviderRequest(
        method="GET",
        url=f"{base_url.rstrip('/')}{SEARCH_PATH}",
        headers={**AUTH.json_headers(api_key), "Accept-Encoding": "gzip"},
        params={"q": query, "count": max_results, "extra_snippets": True, "operators": False},
    )


def normalize(document: Any) -> list[Chunk]:
    rows = []
    for result in objects_at(document, "web", "results"):
        snippets = [string(result.get("description")), *strings(result.get("extra_snippets"))]
        text = join_snippets(html_to_text(s) for s in snippets)
        title = html_to_text(string(result.get("title")))
        rows.append((string(result.get("url")), title, text))
    return ranked_chunks(rows)


# --- the lanes this module backs (collectors.products.search) -----------------------------------


LANES = (
    LaneSpec(
        lane="brave_search",
        provider=PROVIDER,
        key_env=KEY_ENV,
        base_url=BASE_URL,
        price_usd_per_1k=PRICE_USD_PER_1K,
        rate_per_s=1.0,
        rate_group="brave",
        concurrency=4,
        build_request=build_request,
        normalize=normalize,
        normalizer_version=NORMALIZER_VERSION,
        policy=PATIENT_POLICY,
        settings={"extra_snippets": True, "operators": False},
    ),
)
