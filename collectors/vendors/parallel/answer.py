"""Parallel answer: the answer lane `parallel_answer`.

One Task API run per question (the vendor's wire,
`collectors.vendors.parallel`), as parallel-web's `task_run.create` then `task_run.result`
(`api_timeout`) send it: submit `{input: q, processor, task_spec.output_schema: {type: text}}`,
then `GET /v1/tasks/runs/{run_id}/result?timeout=<s>`, which answers when the run completes (or
408, asked again). Answer: `output.content`; citations: `output.basis[].citations[]`, excerpts
as their text.

Request and parser held against parallel-web (tests/providers/test_answer_contracts.py).
"""

from __future__ import annotations

from typing import Any

from collectors.http import CallPolicy, ProviderRequest
from collectors.http.json_fields import at, first_text, strings
from collectors.products.chunks import join_snippets
from collectors.products.search import AnswerSpec
from collectors.vendors.parallel import (
    AUTH,
    BASE_URL,
    KEY_ENV,
    PROVIDER,
    TASK_PRICE_SNAPSHOT,
    TASK_RUNS_PATH,
    TASK_USD_PER_1K,
    output_citations,
    task_run_body,
    task_run_result,
)

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
