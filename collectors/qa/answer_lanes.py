"""Answer lanes: a vendor's OWN answer product, graded like every lane by the run's grader.

Methodology §2 asks search lanes never to request a server-side answer; an answer lane is the
other kind: the vendor searches AND answers (Exa `/answer`, Tavily `/search` with
`include_answer`, Nimble `/v2/search` with `include_answer`, Parallel's Task API). To the QA
runner it is a QaLane whose `search()` is that one call (stored raw, as every call) and which
additionally has `own_answer(call)`: the runner then records the vendor's answer as the lane's
`answer_synthesized` (llm = None: no synthesiser of ours ran) instead of synthesising one. The
citations it returns are its chunks (`normalize`), so the URL metrics score them.

A product that answers later (`AnswerSpec.result`: Parallel submits a task run, then a blocking
result call returns its answer) takes two calls: the submit is stored with stage
"search:submit" and the result call is the unit's stage-"search" call (its round trip, the wait
for the run, is the lane's latency). A submit that fails, or is refused, is itself the unit's
"search" call: nothing was run, so nothing is waited for.

Every answer lane's SystemRef carries `settings.lane_kind = "vendor_answer"`, which the marts
use to keep answer lanes out of the synthesised lanes' table unless asked (`fct_qa_lane_kinds`).

Request/response shapes as documented by the vendors (checked 2026-12 against
exa.ai/docs/reference/answer — `{query, text}` -> `{answer, citations[{url, title, text}],
costDollars{total}}`; docs.tavily.com search with `include_answer` -> `{answer, results[{url,
title, content}]}`; docs.nimbleway.com search with `include_answer` -> `{request_id, answer, answer_citations[{marker,
result_index}] pointing into results[{url, title, description, content, metadata}],
total_results}`; parallel-web 1.3.7 `task_run.create` -> TaskRun `{run_id, status}`, then
`task_run.result` -> TaskRunResult `{run, output{type: text, content, basis[{citations[{url,
title, excerpts}]}]}}`). tests/providers/test_answer_contracts.py validates our bodies against
exa-py 2.27.0, tavily-python 0.8.5, nimble-python 1.6.0 and parallel-web 1.3.7's request types,
points those SDKs at the loopback fake and reads responses built from their response models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from collectors.http import (
    CallOutcome,
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
from collectors.http.json_fields import at
from collectors.products.research import PREFLIGHT_RUN_ID  # one probe id for every preflight
from collectors.products.search import AnswerSpec
from collectors.search.client import PREFLIGHT_ITEM_ID, PREFLIGHT_QUERY, PreflightReport
from collectors.vendors.exa import answer as exa
from collectors.vendors.nimble import answer as nimble
from collectors.vendors.parallel import answer as parallel
from collectors.vendors.tavily import answer as tavily
from warehouse.events import Chunk, ProviderCallCompleted, ProviderCallFailed, SystemRef

LANE_KIND = "vendor_answer"
NORMALIZER_VERSION = "answer-citations@1"
SEARCH_STAGE = "search"  # the unit's call (collectors.qa.run_state)
SUBMIT_STAGE = "search:submit"  # the submit of a product that answers later


# Each vendor's answer module (collectors/vendors/<vendor>/answer.py) declares its answer
# product (`collectors.products.search.AnswerSpec`, price included); this registry only
# collects them.
ANSWER_LANES: dict[str, AnswerSpec] = {
    spec.lane: spec
    for spec in (exa.ANSWER_LANE, tavily.ANSWER_LANE, nimble.ANSWER_LANE, parallel.ANSWER_LANE)
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
    answer = at(body, *spec.answer_field.split("."))
    if spec.answer_always_sent and not isinstance(answer, str):
        raise ValueError(f"expected text at {spec.answer_field}, got {type(answer).__name__}")
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


@dataclass(frozen=True)
class AnswerCalls:
    """Every call one answer took, in order; the last is the unit's stage-"search" call."""

    outcomes: tuple[CallOutcome, ...]
    aborted: LaneAborted | None = None  # the last call was refused: the key cannot go on


def _unit_call(outcome: CallOutcome) -> CallOutcome:
    """The call as the unit's stage-"search" call (a submit that ran nothing decides the unit)."""
    if outcome.payload.stage == SEARCH_STAGE:
        return outcome
    return CallOutcome(
        outcome.payload.model_copy(update={"stage": SEARCH_STAGE}), outcome.body_json
    )


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
        concurrency: int | None = None,
        rate_per_s: float | None = None,
    ):
        self.spec = spec
        self.name = spec.lane
        self.provider = spec.provider
        self.price_per_1k_usd = spec.price_usd_per_1k
        self.normalizer_version = NORMALIZER_VERSION
        self.concurrency = spec.concurrency if concurrency is None else concurrency
        self.rate_per_s = spec.rate_per_s if rate_per_s is None else float(rate_per_s)
        self.base_url = (base_url or spec.base_url).rstrip("/")
        self._key = api_key
        self._client = new_async_client(max_connections=self.concurrency)
        self.channel = Channel(
            lane=spec.lane,
            provider=spec.provider,
            clients=(self._client,),
            throttle=Throttle(self.rate_per_s, self.concurrency),
            policy=CallPolicy(),
            redactor=Redactor([api_key]),
        )
        # The wait for a submitted run's answer: same client, throttle and redaction.
        self._result_channel = replace(self.channel, policy=spec.result_policy or CallPolicy())
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
        settings: dict[str, Any] = {
            "provider": self.provider,
            "lane_kind": LANE_KIND,
            "endpoint": f"{self.base_url}{self.spec.path}",
            "body": self.spec.body("<question>"),
            "concurrency": self.concurrency,
            "rate_per_s": self.rate_per_s,
        }
        if self.spec.result is not None:
            result = self.spec.result(self.base_url, "", {"run_id": "<run_id>"})
            policy = self._result_channel.policy
            settings["result"] = {
                "endpoint": None if result is None else result.url,
                "params": None if result is None else dict(result.params or {}),
                "max_attempts": policy.max_attempts,
                "budget_s": policy.budget_s,
                "attempt_timeout_s": policy.attempt_timeout_s,
            }
        return SystemRef(name=self.name, version=NORMALIZER_VERSION, settings=settings)

    async def call(self, question: str, *, item_id: str, attempt: int) -> CallResult[VendorAnswer]:
        """The product's answer as the one call-result type (of its last call, when it takes
        two). Raises LaneAborted."""
        calls = await self.answer_calls(question, item_id=item_id, attempt=attempt)
        if calls.aborted is not None:
            raise calls.aborted
        return CallResult.of(calls.outcomes[-1], self._read, **self._lineage)

    async def answer_calls(self, question: str, *, item_id: str, attempt: int) -> AnswerCalls:
        """Every call one answer takes: the one call, or a submitted run's submit and result."""
        where = {"item_id": item_id, "attempt": attempt}
        submit = ProviderRequest(
            method="POST",
            url=f"{self.base_url}{self.spec.path}",
            headers=self.spec.auth(self._key),
            json_body=self.spec.body(question),
        )
        stage = SEARCH_STAGE if self.spec.result is None else SUBMIT_STAGE
        try:
            submitted = await call_provider(self.channel, submit, stage=stage, **where)
        except LaneAborted as aborted:
            refused = _unit_call(aborted.outcome)
            return AnswerCalls((refused,), LaneAborted(refused))
        wait = None
        if self.spec.result is not None and submitted.completed:
            wait = self.spec.result(self.base_url, self._key, submitted.body_json)
        if wait is None:  # answered now, or no run to wait for: this call decides the unit
            return AnswerCalls((_unit_call(submitted),))
        try:
            answered = await call_provider(self._result_channel, wait, stage=SEARCH_STAGE, **where)
        except LaneAborted as aborted:
            return AnswerCalls((submitted, aborted.outcome), aborted)
        return AnswerCalls((submitted, answered))

    async def preflight(self, lane: str) -> PreflightReport:
        """Before a paid run (methodology 5.17), one call, no retries. A product that answers
        later is asked for the result of a run that cannot exist (free: a 404 shows the
        endpoint answers and the key was not refused, not that it is valid); the others answer
        one question, billed, as a search lane's preflight searches once."""
        single = replace(self.channel, policy=self.channel.policy.with_overrides(max_attempts=1))
        probe = None
        if self.spec.result is not None:
            probe = self.spec.result(self.base_url, self._key, {"run_id": PREFLIGHT_RUN_ID})
        request = probe or ProviderRequest(
            method="POST",
            url=f"{self.base_url}{self.spec.path}",
            headers=self.spec.auth(self._key),
            json_body=self.spec.body(PREFLIGHT_QUERY),
        )
        where = {"item_id": PREFLIGHT_ITEM_ID, "attempt": 1}
        try:
            outcome = await call_provider(single, request, stage="preflight", **where)
        except LaneAborted as aborted:
            return PreflightReport(lane, "auth_failed", str(aborted), aborted.outcome)
        status = outcome.status_code
        if probe is not None and status == 404:
            detail = (
                "reachable, key not refused (HTTP 404 for an unknown run id; "
                "key validity not proven)"
            )
            return PreflightReport(lane, "ok", detail, outcome)
        if probe is None and outcome.completed:
            return PreflightReport(lane, "ok", f"HTTP {status}, answered", outcome)
        landed = outcome.payload.status_code is not None
        found = "rejected" if landed else "unreachable"
        return PreflightReport(lane, found, f"HTTP {status}" if landed else "no answer", outcome)

    async def search(
        self, question: str, *, item_id: str, attempt: int
    ) -> (
        ProviderCallCompleted
        | ProviderCallFailed
        | tuple[ProviderCallCompleted | ProviderCallFailed, ...]
    ):
        """The QaLane step, for the log: the call's payload (a lane abort's payload too), or the
        submit's and the result's, in order, of a product that answers later."""
        calls = await self.answer_calls(question, item_id=item_id, attempt=attempt)
        payloads = tuple(outcome.payload for outcome in calls.outcomes)
        return payloads[0] if len(payloads) == 1 else payloads

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
