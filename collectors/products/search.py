"""The search and answer products' base: what a vendor declares about each lane it backs, a
`LaneSpec` per search lane and an `AnswerSpec` per answer lane (a vendor's own answer product,
run by `collectors.qa.answer_lanes`).

Each vendor's `collectors/vendors/<vendor>/search.py` exports `LANES` (its search lanes, price,
rate, concurrency and settings included) and, where the vendor sells one, its `answer.py`
exports `ANSWER_LANE`; the registries (`collectors.search.lanes.LANES`,
`collectors.qa.answer_lanes.ANSWER_LANES`) only collect them, so nothing about a lane is
written down twice.

Prices: USD per 1,000 queries at 10 results, list prices snapshot 2026-09-17 (providers.md §1).
Rates: the client-side limits of the reference harness; `rate_group` names the limiter a lane
draws from, so the two lanes of one vendor key share its budget (Exa, Parallel, Tavily), while
Nimble limits per product and gets its own. Concurrency: enough requests in flight to hold the
rate at ~1.5-3 s latency (Little's law), not so many that a slow spell turns into a 429 storm.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from collectors.http import (
    CallOutcome,
    CallPolicy,
    CallResult,
    ProviderRequest,
    RequestIdReader,
    request_id_from_headers,
)
from collectors.http.json_fields import parse_body
from warehouse.events import Chunk, ProviderCallCompleted, ProviderCallFailed, SystemRef

PRICE_SNAPSHOT = "2026-09-17"
MAX_RESULTS = 10

# [N-SQA]: 3 attempts, 0.5 -> 5 s; Brave and Firecrawl 5 attempts, 2 -> 10 s; 60 s per request.
STANDARD_POLICY = CallPolicy(max_attempts=3, backoff_base_s=0.5, backoff_cap_s=5.0, budget_s=60.0)
PATIENT_POLICY = CallPolicy(max_attempts=5, backoff_base_s=2.0, backoff_cap_s=10.0, budget_s=60.0)

RequestBuilder = Callable[[str, str, str, int], ProviderRequest]  # base_url, key, query, n


@dataclass(frozen=True)
class LaneSpec:
    lane: str
    provider: str
    key_env: str
    base_url: str
    price_usd_per_1k: float
    rate_per_s: float
    rate_group: str
    concurrency: int
    build_request: RequestBuilder
    normalize: Callable[[Any], list[Chunk]]  # parsed JSON body -> ranked chunks
    normalizer_version: str
    vendor_request_id: RequestIdReader = request_id_from_headers
    policy: CallPolicy = STANDARD_POLICY
    settings: Mapping[str, Any] = field(default_factory=dict)  # what makes this lane this lane
    price_snapshot: str = PRICE_SNAPSHOT
    max_results: int = MAX_RESULTS
    healthcheck_path: str | None = None
    # A 2xx body the vendor marks as failed -> why (see collectors.http.Channel.body_failure).
    body_failure: Callable[[Any], str | None] | None = None

    def result(self, outcome: CallOutcome) -> CallResult[list[Chunk]]:
        """A call of this lane as the one call-result type: its chunks, price and lineage."""
        return CallResult.of(
            outcome,
            self.normalize,
            normalizer_version=self.normalizer_version,
            price_usd_per_1k=self.price_usd_per_1k,
        )

    def stored_result(
        self, payload: ProviderCallCompleted | ProviderCallFailed
    ) -> CallResult[list[Chunk]]:
        """The same, from a stored payload (what a resumed run or a re-normalisation reads)."""
        return CallResult.from_payload(
            payload,
            self.normalize,
            normalizer_version=self.normalizer_version,
            price_usd_per_1k=self.price_usd_per_1k,
        )

    def normalize_raw(self, raw_body: str) -> list[Chunk]:
        """Chunks from a stored raw body: what a re-normalisation from the log runs."""
        return self.normalize(parse_body(raw_body))

    def system_ref(
        self,
        *,
        rate_per_s: float | None = None,
        concurrency: int | None = None,
        policy: CallPolicy | None = None,
    ) -> SystemRef:
        """The lane as a run used it (pass the effective overrides), for RunStarted.systems."""
        policy = policy or self.policy
        return SystemRef(
            name=self.lane,
            version=self.normalizer_version,
            settings={
                "provider": self.provider,
                **self.settings,
                "max_results": self.max_results,
                "price_usd_per_1k": self.price_usd_per_1k,
                "price_snapshot": self.price_snapshot,
                "rate_per_s": self.rate_per_s if rate_per_s is None else rate_per_s,
                "rate_group": self.rate_group,
                "concurrency": self.concurrency if concurrency is None else concurrency,
                "retry": {
                    "max_attempts": policy.max_attempts,
                    "backoff_base_s": policy.backoff_base_s,
                    "backoff_cap_s": policy.backoff_cap_s,
                    "budget_s": policy.budget_s,
                    "attempt_timeout_s": policy.attempt_timeout_s,
                    "extra_retryable_statuses": sorted(policy.extra_retryable_statuses),
                    **(
                        {"extra_abort_statuses": sorted(dict(policy.extra_abort_statuses))}
                        if policy.extra_abort_statuses
                        else {}
                    ),
                },
            },
        )


# The answer of a submit-then-result product: (base_url, key, the submit's parsed body) -> the
# request that waits for the run's result, or None when the submit body names no run.
ResultRequest = Callable[[str, str, Any], ProviderRequest | None]


@dataclass(frozen=True)
class AnswerSpec:
    """A vendor's own answer product as a QA lane (collectors.qa.answer_lanes).

    Most products answer the one POST of `body` to `path`. One that answers later (Parallel's
    Task API) also declares `result`: the POST then submits a run, and `result` builds the call
    that waits for its answer, sent under `result_policy` (a blocking wait needs longer
    timeouts than a search)."""

    lane: str
    provider: str
    key_env: str
    base_url: str
    path: str
    price_usd_per_1k: float | None
    auth: Callable[[str], dict[str, str]]
    body: Callable[[str], dict[str, Any]]
    answer_field: str  # the answer's key; a dotted path when nested ("output.content")
    # body -> the cited sources as {url, title, text}, in the vendor's citation order
    citations: Callable[[dict[str, Any]], list[dict[str, Any]]]
    rate_per_s: float = 1.0
    concurrency: int = 2  # questions in flight (a slow product needs more to keep its rate)
    price_snapshot: str | None = PRICE_SNAPSHOT  # None: the source states no date
    result: ResultRequest | None = None
    result_policy: CallPolicy | None = None
    # The vendor always sends the answer field (its empty string is a refusal): a body without
    # text there is malformed, not a refusal.
    answer_always_sent: bool = False
