"""Nimble answer: the search endpoint with `include_answer`, the answer lane `nimble_answer`
(registered in collectors.qa.answer_lanes)."""

from __future__ import annotations

from typing import Any

from collectors.http.json_fields import objects_at
from collectors.products.search import AnswerSpec
from collectors.vendors.nimble import AUTH, BASE_URL, KEY_ENV, PROVIDER
from collectors.vendors.nimble import SEARCH_USD_PER_1K as PRICE_USD_PER_1K
from collectors.vendors.nimble.search import SEARCH_PATH


def answer_citations(body: Any) -> list[dict[str, Any]]:
    """nimble-python SearchResponse: `answer_citations[{marker, result_index}]` point into
    `results[]`; in marker order, each result once."""
    results = objects_at(body, "results")
    marks = sorted(objects_at(body, "answer_citations"), key=lambda c: c.get("marker", 0))
    seen: list[int] = []
    for mark in marks:
        index = mark.get("result_index")
        if isinstance(index, int) and 0 <= index < len(results) and index not in seen:
            seen.append(index)
    return [
        {
            "url": results[i].get("url"),
            "title": results[i].get("title"),
            "text": results[i].get("description"),
        }
        for i in seen
    ]


# Nimble /v2/search with `include_answer`: `{request_id, answer, answer_citations[{marker,
# result_index}]}` pointing into `results[]` (nimble-python SearchResponse).
ANSWER_LANE = AnswerSpec(
    lane="nimble_answer",
    provider=PROVIDER,
    key_env=KEY_ENV,
    base_url=BASE_URL,
    path=SEARCH_PATH,
    price_usd_per_1k=PRICE_USD_PER_1K,  # billed as a search (the vendor module)
    auth=AUTH.json_headers,
    body=lambda question: {"query": question, "include_answer": True, "max_results": 10},
    answer_field="answer",
    citations=answer_citations,
)
