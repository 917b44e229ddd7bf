"""Tavily answer: the search endpoint with `include_answer`, the answer lane `tavily_answer`
(registered in collectors.qa.answer_lanes)."""

from __future__ import annotations

from collectors.products.chunks import listed_sources
from collectors.products.search import AnswerSpec
from collectors.vendors.tavily import AUTH, BASE_URL, KEY_ENV, PROVIDER
from collectors.vendors.tavily import SEARCH_USD_PER_1K as PRICE_USD_PER_1K
from collectors.vendors.tavily.search import SEARCH_PATH

# Tavily /search with `include_answer`: `{answer, results[{url, title, content}]}`.
ANSWER_LANE = AnswerSpec(
    lane="tavily_answer",
    provider=PROVIDER,
    key_env=KEY_ENV,
    base_url=BASE_URL,
    path=SEARCH_PATH,
    price_usd_per_1k=PRICE_USD_PER_1K,  # 1 credit, as for search (the vendor module)
    auth=AUTH.json_headers,
    body=lambda question: {"query": question, "include_answer": True, "max_results": 10},
    answer_field="answer",
    citations=lambda body: listed_sources(body, "results", "content"),
)
