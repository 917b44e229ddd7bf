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

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from collectors.http import (
    CallPolicy,
    CallResult,
    Channel,
    LaneAborted,
    ProviderRequest,
    Redactor,
    Throttle,
    api_key_from_env,
    call_provider,
    new_async_client,
)
from collectors.search import exa, nimble, tavily
from collectors.search.spec import AnswerSpec
from warehouse.events import Chunk, ProviderCallCompleted, ProviderCallFailed, SystemRef

LANE_KIND = "vendor_answer"
NORMALIZER_VERSION = "answer-citations@1"


# Each vendor module declares its answer product (`collectors.search.spec.AnswerSpec`, price
# included); this registry only collects them.
ANSWER_LANES: dict[str, AnswerSpec] = {
    spec.lane: spec for spec in (exa.ANSWER_LANE, tavily.ANSWER_LANE, nimble.ANSWER_LANE)
}


@dataclass(frozen=True)
class VendorAnswer:
    """What an answer lane's call is worth, normalised: the vendor's answer and its sources."""

    outcome: str  # "answered", or "refused" for an empty answer (a landed miss)
    answer: str | None
    citations: list[Chunk]  # the sources it cites, in its order, ranked 1..n


def read_answer(spec: AnswerSpec, body: Any) -> VendorAnswer:
    """The normaliser of an answer lane: a body that is not a JSON object is an error (the
    runner records it as a malformed body), never an empty answer."""
    if not isinstance(body, dict):
        raise ValueError(f"expected a JSON object, got {type(body).__name__}")
    answer = body.get(spec.answer_field)
    citations = [
        Chunk(
            rank=rank,
            url=str(c.get("url") or ""),
            title=str(c.get("title") or ""),
            text=str(c.get("text") or ""),
        )
        for rank, c in enumerate(spec.citations(body), start=1)
    ]
    if isinstance(answer, str) and answer.strip():
        return VendorAnswer("answered", answer.strip(), citations)
    return VendorAnswer("refused", None, citations)


class VendorAnswerLane:
    """One vendor answer product as a QA lane (see the module docstring)."""

    needs_search = True
    lane_kind = LANE_KIND

    def __init__(
        self,
        spec: AnswerSpec,
        api_key: str,
        *,
        base_url: str | None = None,
        concurrency: int = 2,
        rate_per_s: float | None = None,
    ):
        self.spec = spec
        self.name = spec.lane
        self.provider = spec.provider
        self.price_per_1k_usd = spec.price_usd_per_1k
        self.normalizer_version = NORMALIZER_VERSION
        self.concurrency = concurrency
        self.rate_per_s = spec.rate_per_s if rate_per_s is None else float(rate_per_s)
        self.base_url = (base_url or spec.base_url).rstrip("/")
        self._key = api_key
        self._client = new_async_client(max_connections=concurrency)
        self.channel = Channel(
            lane=spec.lane,
            provider=spec.provider,
            clients=(self._client,),
            throttle=Throttle(self.rate_per_s, concurrency),
            policy=CallPolicy(),
            redactor=Redactor([api_key]),
        )
        self.resource = self
        self._read = partial(read_answer, spec)
        self._lineage = {
            "normalizer_version": NORMALIZER_VERSION,
            "price_usd_per_1k": spec.price_usd_per_1k,
        }

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
                "rate_per_s": self.rate_per_s,
            },
        )

    async def call(self, question: str, *, item_id: str, attempt: int) -> CallResult[VendorAnswer]:
        """One call of the answer product, as the one call-result type. Raises LaneAborted."""
        request = ProviderRequest(
            method="POST",
            url=f"{self.base_url}{self.spec.path}",
            headers=self.spec.auth(self._key),
            json_body=self.spec.body(question),
        )
        outcome = await call_provider(
            self.channel, request, stage="search", item_id=item_id, attempt=attempt
        )
        return CallResult.of(outcome, self._read, **self._lineage)

    async def search(
        self, question: str, *, item_id: str, attempt: int
    ) -> ProviderCallCompleted | ProviderCallFailed:
        """The QaLane step: the call's payload (a lane abort's payload too), for the log."""
        try:
            return (await self.call(question, item_id=item_id, attempt=attempt)).payload
        except LaneAborted as aborted:
            return aborted.payload

    def stored(self, call: ProviderCallCompleted) -> CallResult[VendorAnswer]:
        return CallResult.from_payload(call, self._read, **self._lineage)

    def normalize(self, call: ProviderCallCompleted) -> list[Chunk]:
        """The citations the vendor gave for its answer, in its order, as ranked chunks."""
        return self._value(call).citations

    def own_answer(self, call: ProviderCallCompleted) -> tuple[str, str | None]:
        """(outcome, answer) of the vendor's own answer: an empty answer is a landed miss."""
        value = self._value(call)
        return value.outcome, value.answer

    def _value(self, call: ProviderCallCompleted) -> VendorAnswer:
        value = self.stored(call).value
        assert value is not None  # a completed call always normalises (or raises)
        return value


def answer_lanes(
    names: list[str],
    *,
    environ: Mapping[str, str],
    base_urls: Mapping[str, str] | None = None,
    rate_per_s: float | Mapping[str, float] | None = None,
) -> list[VendorAnswerLane]:
    """The named answer lanes. `rate_per_s` overrides the vendor's documented rate, as
    SearchClient's does for search lanes: one value, or by lane name (a loopback fake or a
    raised quota needs no 1 request/s pacing)."""
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
        rate = rate_per_s if not isinstance(rate_per_s, Mapping) else rate_per_s.get(spec.lane)
        lanes.append(VendorAnswerLane(spec, key, base_url=base, rate_per_s=rate))
    return lanes
