"""Exa answer: POST {base}/answer, `x-api-key: <key>`, the answer lane `exa_answer`
(registered in collectors.qa.answer_lanes)."""

from __future__ import annotations

from collectors.products.chunks import listed_sources
from collectors.products.search import AnswerSpec
from collectors.vendors.exa import (
    ANSWER_PRICE_SNAPSHOT,
    ANSWER_USD_PER_1K,
    AUTH,
    BASE_URL,
    KEY_ENV,
    PROVIDER,
)

# Exa /answer: `{query, text}` -> `{answer, citations[{id, url, title, text}], costDollars}`
# (exa-py `Exa.answer`, AnswerResponse; tests/providers/test_answer_contracts.py).
ANSWER_LANE = AnswerSpec(
    lane="exa_answer",
    provider=PROVIDER,
    key_env=KEY_ENV,
    base_url=BASE_URL,
    path="/answer",
    price_usd_per_1k=ANSWER_USD_PER_1K,
    price_snapshot=ANSWER_PRICE_SNAPSHOT,
    auth=AUTH.json_headers,
    body=lambda question: {"query": question, "text": True},
    answer_field="answer",
    citations=lambda body: listed_sources(body, "citations", "text"),
)
