"""Parallel search: POST {base}/v1/search, `x-api-key: <key>`, and the answer lane.

Body: objective=q, search_queries=[q], mode (basic | turbo: one lane each),
advanced_settings.max_results. Chunk text = the `excerpts`, one per line. Request id:
`search_id` in the body.

Answer lane `parallel_answer`: one Task API run per question (the vendor's wire,
`collectors.vendors.parallel`), as parallel-web's `task_run.create` then `task_run.result`
(`api_timeout`) send it: submit `{input: q, processor, task_spec.output_schema: {type: text}}`,
then `GET /v1/tasks/runs/{run_id}/result?timeout=<s>`, which answers when the run completes (or
408, asked again). Answer: `output.content`; citations: `output.basis[].citations[]`, excerpts
as their text.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from collectors.http import CallPolicy, ProviderRequest, request_id_from_headers
from collectors.http.json_fields import (
    at,
    first_nonempty_string,
    first_text,
    objects_at,
    string,
    strings,
)
from collectors.products.chunks import join_snippets, ranked_chunks
from collectors.products.search import AnswerSpec, LaneSpec
from collectors.vendors.parallel import (
    AUTH,
    BASE_URL,
    KEY_ENV,
    PROVIDER,
    SDK,
    TASK_PRICE_SNAPSHOT,
    TASK_RUNS_PATH,
    TASK_USD_PER_1K,
    output_citations,
    task_run_body,
    task_run_result,
)
from collectors.vendors.parallel import SEARCH_USD_PER_1K as PRICE_USD_PER_1K
from warehouse.events import Chunk

# Request and parser held against the SDK's serialiser and response models
# (tests/providers/test_vendor_contracts.py; the answer lane: test_answer_contracts.py).
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


# --- the answer lane (collectors.qa.answer_lanes) -------------------------------------------

# `base` (USD 10 per 1,000 runs; `lite` at 5 is the cheaper tier, a one-word change here). The
# text output with no description of ours asks for the vendor's own plain answer, as the other
# answer lanes send the question alone.
ANSWER_PROCESSOR = "base"
ANSWER_OUTPUT_SCHEMA = {"type": "text"}
# The result call blocks up to this long server-side, then answers 408 and is asked again (the
# SDK's `execute` loop); a run still unanswered after ANSWER_RESULT_POLICY's budget fails.
ANSWER_WAIT_S = 120
ANSWER_RESULT_POLICY = CallPolicy(
    max_attempts=5,
    budget_s=600.0,
    read_timeout_s=ANSWER_WAIT_S + 30.0,
    attempt_timeout_s=ANSWER_WAIT_S + 30.0,
)


def answer_result(base_url: str, api_key: str, submitted: Any) -> ProviderRequest | None:
    run_id = first_text(submitted, "run_id")
    if run_id is None:
        return None
    return task_run_result(base_url, api_key, run_id, wait_s=ANSWER_WAIT_S)


def answer_citations(body: Any) -> list[dict[str, Any]]:
    return [
        {
            "url": c.get("url"),
            "title": c.get("title"),
            "text": join_snippets(strings(c.get("excerpts"))),
        }
        for c in output_citations(at(body, "output"))
    ]


ANSWER_LANE = AnswerSpec(
    lane="parallel_answer",
    provider=PROVIDER,
    key_env=KEY_ENV,
    base_url=BASE_URL,
    path=TASK_RUNS_PATH,
    price_usd_per_1k=TASK_USD_PER_1K[ANSWER_PROCESSOR],
    price_snapshot=TASK_PRICE_SNAPSHOT,
    auth=AUTH.json_headers,
    body=lambda question: task_run_body(
        question, processor=ANSWER_PROCESSOR, output_schema=ANSWER_OUTPUT_SCHEMA
    ),
    answer_field="output.content",
    answer_always_sent=True,
    citations=answer_citations,
    # A run takes tens of seconds, so 16 questions in flight; 5 calls/s is far under the key's
    # 2,000 requests/min (providers.md §2).
    rate_per_s=5.0,
    concurrency=16,
    result=answer_result,
    result_policy=ANSWER_RESULT_POLICY,
)
