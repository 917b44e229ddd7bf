"""Answer lanes: a vendor's OWN answer product, graded like every lane by the run's grader.

Methodology §2 asks search lanes never to request a server-side answer; an answer lane is the
other kind: the vendor searches AND answers (Exa `/answer`, Tavily `/search` with
`include_answer`, Nimble `/v2/search` with `include_answer`). To the QA runner it is a QaLane
whose `search()` is that one call (stored raw, as every call) and which additionally has
`own_answer(call)`: the runner then records the vendor's answer as the lane's
`answer_synthesized` (llm = None: no synthesiser of ours ran) instead of synthesising one. The
citations it returns are its chunks (`normalize`), so the URL metrics score them.

Every answer lane's SystemRef carries `settings.lane_kind = "vendor_answer"`, which the marts
use to keep answer lanes out of the synthesised lanes' table unless asked (`fct_qa_lane_kinds`).

Request/response shapes as documented by the vendors (checked 2026-12 against
exa.ai/docs/reference/answer — `{query, text}` -> `{answer, citations[{url, title, text}],
costDollars{total}}`; docs.tavily.com search with `include_answer` -> `{answer, results[{url,
title, content}]}`; docs.nimbleway.com search with `include_answer` -> `{request_id, answer, answer_citations[{marker,
result_index}] pointing into results[{url, title, description, content, metadata}],
total_results}`). tests/providers/test_answer_contracts.py validates our bodies against
exa-py 2.27.0, tavily-python 0.8.5 and nimble-python 1.6.0's request types, points those SDKs
at the loopback fake and reads responses built from their response models.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from collectors.http import (
    CallPolicy,
    Channel,
    LaneAborted,
    ProviderRequest,
    Redactor,
    Throttle,
    api_key_from_env,
    call_provider,
    new_async_client,
)
from warehouse.events import Chunk, ProviderCallCompleted, ProviderCallFailed, SystemRef

LANE_KIND = "vendor_answer"
NORMALIZER_VERSION = "answer-citations@1"


@dataclass(frozen=True)
class AnswerSpec:
    lane: str
    provider: str
    key_env: str
    base_url: str
    path: str
    price_usd_per_1k: float | None
    auth: Callable[[str], dict[str, str]]
    body: Callable[[str], dict[str, Any]]
    answer_field: str
    # body -> the cited sources as {url, title, text}, in the vendor's citation order
    citations: Callable[[dict[str, Any]], list[dict[str, Any]]]
    rate_per_s: float = 1.0


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Accept": "application/json"}


def _listed(body: dict[str, Any], field: str, text_field: str) -> list[dict[str, Any]]:
    return [
        {"url": c.get("url"), "title": c.get("title"), "text": c.get(text_field)}
        for c in body.get(field) or []
        if isinstance(c, dict)
    ]


def _nimble_citations(body: dict[str, Any]) -> list[dict[str, Any]]:
    """nimble-python SearchResponse: `answer_citations[{marker, result_index}]` point into
    `results[]`; in marker order, each result once."""
    results = [r for r in body.get("results") or [] if isinstance(r, dict)]
    marks = sorted(
        (c for c in body.get("answer_citations") or [] if isinstance(c, dict)),
        key=lambda c: c.get("marker", 0),
    )
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


ANSWER_LANES: dict[str, AnswerSpec] = {
    spec.lane: spec
    for spec in (
        AnswerSpec(
            lane="exa_answer",
            provider="exa",
            key_env="EXA_API_KEY",
            base_url="https://api.exa.ai",
            path="/answer",
            price_usd_per_1k=5.0,  # Exa answer list price, snapshot 2026-12 (unconfirmed)
            auth=lambda key: {"x-api-key": key, "Accept": "application/json"},
            body=lambda q: {"query": q, "text": True},
            answer_field="answer",
            citations=lambda body: _listed(body, "citations", "text"),
        ),
        AnswerSpec(
            lane="tavily_answer",
            provider="tavily",
            key_env="TAVILY_API_KEY",
            base_url="https://api.tavily.com",
            path="/search",
            price_usd_per_1k=8.0,  # 1 credit as for search (providers.md)
            auth=_bearer,
            body=lambda q: {"query": q, "include_answer": True, "max_results": 10},
            answer_field="answer",
            citations=lambda body: _listed(body, "results", "content"),
        ),
        AnswerSpec(
            lane="nimble_answer",
            provider="nimble",
            key_env="NIMBLE_API_KEY",
            base_url="https://sdk.nimbleway.com",
            path="/v2/search",
            price_usd_per_1k=5.0,  # Search tier list price (providers.md, unconfirmed)
            auth=_bearer,
            body=lambda q: {"query": q, "include_answer": True, "max_results": 10},
            answer_field="answer",
            citations=_nimble_citations,
        ),
    )
}


class VendorAnswerLane:
    """One vendor answer product as a QA lane (see the module docstring)."""

    needs_search = True
    lane_kind = LANE_KIND

    def __init__(
        self, spec: AnswerSpec, api_key: str, *, base_url: str | None = None, concurrency: int = 2
    ):
        self.spec = spec
        self.name = spec.lane
        self.provider = spec.provider
        self.price_per_1k_usd = spec.price_usd_per_1k
        self.normalizer_version = NORMALIZER_VERSION
        self.concurrency = concurrency
        self.base_url = (base_url or spec.base_url).rstrip("/")
        self._key = api_key
        self._client = new_async_client(max_connections=concurrency)
        self.channel = Channel(
            lane=spec.lane,
            provider=spec.provider,
            clients=(self._client,),
            throttle=Throttle(spec.rate_per_s, concurrency),
            policy=CallPolicy(),
            redactor=Redactor([api_key]),
        )
        self.resource = self

    async def __aenter__(self) -> VendorAnswerLane:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()

    def system_ref(self) -> SystemRef:
        return SystemRef(
            name=self.name,
            version=NORMALIZER_VERSION,
            settings={
                "provider": self.provider,
                "lane_kind": LANE_KIND,
                "endpoint": f"{self.base_url}{self.spec.path}",
                "body": self.spec.body("<question>"),
                "concurrency": self.concurrency,
                "rate_per_s": self.spec.rate_per_s,
            },
        )

    async def search(
        self, question: str, *, item_id: str, attempt: int
    ) -> ProviderCallCompleted | ProviderCallFailed:
        request = ProviderRequest(
            method="POST",
            url=f"{self.base_url}{self.spec.path}",
            headers=self.spec.auth(self._key),
            json_body=self.spec.body(question),
        )
        try:
            outcome = await call_provider(
                self.channel, request, stage="search", item_id=item_id, attempt=attempt
            )
        except LaneAborted as aborted:
            return aborted.payload
        return outcome.payload

    def _body(self, call: ProviderCallCompleted) -> dict[str, Any]:
        body = json.loads(call.raw_body)
        if not isinstance(body, dict):
            raise ValueError(f"expected a JSON object, got {type(body).__name__}")
        return body

    def normalize(self, call: ProviderCallCompleted) -> list[Chunk]:
        """The citations the vendor gave for its answer, in its order, as ranked chunks."""
        citations = self.spec.citations(self._body(call))
        return [
            Chunk(
                rank=rank,
                url=str(c.get("url") or ""),
                title=str(c.get("title") or ""),
                text=str(c.get("text") or ""),
            )
            for rank, c in enumerate(citations, start=1)
        ]

    def own_answer(self, call: ProviderCallCompleted) -> tuple[str, str | None]:
        """(outcome, answer) of the vendor's own answer: an empty answer is a landed miss."""
        answer = self._body(call).get(self.spec.answer_field)
        if isinstance(answer, str) and answer.strip():
            return "answered", answer.strip()
        return "refused", None


def answer_lanes(
    names: list[str],
    *,
    environ: Mapping[str, str],
    base_urls: Mapping[str, str] | None = None,
) -> list[VendorAnswerLane]:
    unknown = [n for n in names if n not in ANSWER_LANES]
    if unknown:
        raise ValueError(
            f"unknown answer lane(s) {', '.join(unknown)}; known: {', '.join(ANSWER_LANES)}"
        )
    lanes = []
    for name in names:
        spec = ANSWER_LANES[name]
        key = api_key_from_env(spec.key_env, environ)
        base = (base_urls or {}).get(spec.lane) or (base_urls or {}).get(spec.provider)
        lanes.append(VendorAnswerLane(spec, key, base_url=base))
    return lanes
