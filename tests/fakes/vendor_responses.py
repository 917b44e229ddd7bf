"""Deterministic, vendor-shaped search responses for the loopback fake server: result i of query
q always has the same URL, title and text.

Shapes follow the vendors' SDK response models (tests/providers/test_vendor_contracts.py
validates every one against them, unknown fields included): nimble-python 1.6.0
`SearchResponse`, exa-py 2.27.0 `SearchResponse`/`ResultWithSummary`, parallel-web 1.3.7
`SearchResult`, firecrawl-py 4.54.0 v2 `SearchResponse`; Tavily (no response model) and Brave
(no SDK) follow their documented bodies."""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import parse_qs

# provider -> (method, path under the provider's prefix, auth header, auth value prefix)
SEARCH_ENDPOINTS: dict[str, tuple[str, str, str, str]] = {
    "nimble": ("POST", "/v2/search", "authorization", "Bearer "),
    "exa": ("POST", "/search", "x-api-key", ""),
    "parallel": ("POST", "/v1/search", "x-api-key", ""),
    "tavily": ("POST", "/search", "authorization", "Bearer "),
    "brave": ("GET", "/res/v1/web/search", "x-subscription-token", ""),
    "firecrawl": ("POST", "/v2/search", "authorization", "Bearer "),
}
HEALTHCHECKS: dict[str, str] = {"nimble": "/v2/healthcheck"}


def query_and_count(provider: str, body: bytes, query_string: str) -> tuple[str, int]:
    """The query text and the number of results the request asked for."""
    if provider == "brave":
        params = parse_qs(query_string)
        return params.get("q", [""])[0], int(params.get("count", ["10"])[0])
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return "", 10
    if not isinstance(request, dict):
        return "", 10
    if provider == "parallel":
        settings = request.get("advanced_settings") or {}
        return str(request.get("objective", "")), int(settings.get("max_results", 10))
    count_field = {"exa": "numResults", "firecrawl": "limit"}.get(provider, "max_results")
    return str(request.get("query", "")), int(request.get(count_field, 10))


def _result(query: str, i: int) -> dict[str, str]:
    digest = hashlib.sha256(f"{query}\x1f{i}".encode()).hexdigest()[:12]
    return {
        "url": f"https://example.org/{digest}/{i}",
        "title": f"Result {i} for {query}",
        "text": f"Snippet {i} about {query}.",
        "extra": f"More about {query} ({i}).",
        "id": digest,
    }


def search_response(provider: str, query: str, count: int) -> dict[str, Any]:
    rows = [_result(query, i) for i in range(1, max(0, count) + 1)]
    request_id = hashlib.sha256(f"{provider}\x1f{query}".encode()).hexdigest()[:16]
    if provider == "nimble":
        return {
            "request_id": f"req-{request_id}",
            "results": [
                {
                    "url": r["url"],
                    "title": r["title"],
                    "description": r["text"],
                    "content": "",  # the page text only with full_content, never requested
                    "metadata": {
                        "country": "US",
                        "entity_type": "OrganicResult",
                        "locale": "en",
                        "position": n,
                    },
                }
                for n, r in enumerate(rows, start=1)
            ],
            "total_results": len(rows),
            "answer": None,
        }
    if provider == "exa":
        return {
            "requestId": request_id,
            "resolvedSearchType": "neural",
            "results": [
                {"id": r["url"], "url": r["url"], "title": r["title"], "summary": r["text"]}
                for r in rows
            ],
        }
    if provider == "parallel":
        return {
            "search_id": f"search_{request_id}",
            "results": [
                {"url": r["url"], "title": r["title"], "excerpts": [r["text"], r["extra"]]}
                for r in rows
            ],
            "session_id": f"session_{request_id}",
            "warnings": None,
            "usage": [{"name": "sku_search", "count": 1}],
        }
    if provider == "tavily":
        return {
            "query": query,
            "answer": None,
            "images": [],
            "results": [
                {"url": r["url"], "title": r["title"], "content": r["text"], "score": 0.9}
                for r in rows
            ],
            "response_time": 0.01,
            "request_id": request_id,
        }
    if provider == "brave":
        return {
            "type": "search",
            "query": {"original": query},
            "web": {
                "type": "search",
                "results": [
                    {
                        "url": r["url"],
                        "title": r["title"],
                        "description": f"<strong>{r['text']}</strong>",
                        "extra_snippets": [r["extra"]],
                    }
                    for r in rows
                ],
            },
        }
    if provider == "firecrawl":
        return {
            "success": True,
            "data": {
                "web": [
                    {
                        "url": r["url"],
                        "title": r["title"],
                        "description": r["text"],
                        "position": n,
                    }
                    for n, r in enumerate(rows, start=1)
                ]
            },
        }
    raise KeyError(provider)
