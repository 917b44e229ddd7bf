"""The SimpleQA search lanes (methodology §2.2), as an explicit registry: `LANES` is the list.

Prices: USD per 1,000 queries at 10 results, list prices snapshot 2026-09-17 (providers.md §1).
Rates: the client-side limits of the reference harness; `rate_group` names the limiter a lane
draws from, so the two lanes of one vendor key share its budget (Exa, Parallel, Tavily), while
Nimble limits per product and gets its own. Concurrency: enough requests in flight to hold the
rate at ~1.5-3 s latency (Little's law), not so many that a slow spell turns into a 429 storm.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Any

from collectors.http import CallPolicy, ProviderRequest, RequestIdReader, request_id_from_headers
from collectors.search import brave, exa, firecrawl, nimble, parallel, tavily
from collectors.search.common import parse_body
from warehouse.events import Chunk, SystemRef

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


def _lanes(*specs: LaneSpec) -> Mapping[str, LaneSpec]:
    return MappingProxyType({spec.lane: spec for spec in specs})


LANES: Mapping[str, LaneSpec] = _lanes(
    LaneSpec(
        lane="nimble_search",
        provider=nimble.PROVIDER,
        key_env=nimble.KEY_ENV,
        base_url=nimble.BASE_URL,
        price_usd_per_1k=nimble.PRICE_USD_PER_1K,
        rate_per_s=9.0,
        rate_group="nimble:search_standard",  # Nimble limits per product (search depth)
        concurrency=16,
        build_request=nimble.build_request,
        normalize=nimble.normalize,
        normalizer_version=nimble.NORMALIZER_VERSION,
        vendor_request_id=nimble.vendor_request_id,
        policy=STANDARD_POLICY.with_overrides(extra_retryable_statuses=nimble.RETRYABLE_EXTRA),
        settings={"search_depth": nimble.SEARCH_DEPTH, "include_answer": False},
        healthcheck_path=nimble.HEALTHCHECK_PATH,
    ),
    *(
        LaneSpec(
            lane=f"exa_search_{search_type}",
            provider=exa.PROVIDER,
            key_env=exa.KEY_ENV,
            base_url=exa.BASE_URL,
            price_usd_per_1k=exa.PRICE_USD_PER_1K,
            rate_per_s=9.0,
            rate_group="exa",
            concurrency=16,
            build_request=partial(exa.build_request, search_type=search_type),
            normalize=exa.normalize,
            normalizer_version=exa.NORMALIZER_VERSION,
            vendor_request_id=exa.vendor_request_id,
            settings={"type": search_type, "contents": {"summary": True}},
        )
        for search_type in ("auto", "fast")
    ),
    *(
        LaneSpec(
            lane=f"parallel_search_{mode}",
            provider=parallel.PROVIDER,
            key_env=parallel.KEY_ENV,
            base_url=parallel.BASE_URL,
            price_usd_per_1k=parallel.PRICE_USD_PER_1K[mode],
            rate_per_s=9.0,
            rate_group="parallel",
            concurrency=16,
            build_request=partial(parallel.build_request, mode=mode),
            normalize=parallel.normalize,
            normalizer_version=parallel.NORMALIZER_VERSION,
            vendor_request_id=parallel.vendor_request_id,
            settings={"mode": mode},
        )
        for mode in ("basic", "turbo")
    ),
    *(
        LaneSpec(
            lane=f"tavily_search_{depth}",
            provider=tavily.PROVIDER,
            key_env=tavily.KEY_ENV,
            base_url=tavily.BASE_URL,
            price_usd_per_1k=tavily.PRICE_USD_PER_1K,
            rate_per_s=1.0,
            rate_group="tavily",
            concurrency=4,
            build_request=partial(tavily.build_request, search_depth=depth),
            normalize=tavily.normalize,
            normalizer_version=tavily.NORMALIZER_VERSION,
            vendor_request_id=tavily.vendor_request_id,
            policy=STANDARD_POLICY.with_overrides(extra_abort_statuses=tavily.ABORT_STATUSES),
            settings={"search_depth": depth, "include_answer": False},
        )
        for depth in ("basic", "fast")
    ),
    LaneSpec(
        lane="brave_search",
        provider=brave.PROVIDER,
        key_env=brave.KEY_ENV,
        base_url=brave.BASE_URL,
        price_usd_per_1k=brave.PRICE_USD_PER_1K,
        rate_per_s=1.0,
        rate_group="brave",
        concurrency=4,
        build_request=brave.build_request,
        normalize=brave.normalize,
        normalizer_version=brave.NORMALIZER_VERSION,
        policy=PATIENT_POLICY,
        settings={"extra_snippets": True, "operators": False},
    ),
    LaneSpec(
        lane="firecrawl_search",
        provider=firecrawl.PROVIDER,
        key_env=firecrawl.KEY_ENV,
        base_url=firecrawl.BASE_URL,
        price_usd_per_1k=firecrawl.PRICE_USD_PER_1K,
        rate_per_s=1.0,
        rate_group="firecrawl",
        concurrency=4,
        build_request=firecrawl.build_request,
        normalize=firecrawl.normalize,
        normalizer_version=firecrawl.NORMALIZER_VERSION,
        vendor_request_id=firecrawl.vendor_request_id,
        body_failure=firecrawl.body_failure,
        policy=PATIENT_POLICY,
        settings={
            "sources": [{"type": "web"}],
            "scrape": False,
            "timeout_ms": firecrawl.SERVER_TIMEOUT_MS,
        },
    ),
)
