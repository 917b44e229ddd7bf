"""The DRACO research systems, as an explicit registry (names are fixed: dbt's price seed and
the app use them).

    lane = make_lane("exa_agent_high", base_urls={"exa": "http://127.0.0.1:8080/exa"})
    async with lane:
        payload = await lane.research(task, instruction, attempt=1, emit=emit)

`make_lane` checks the key now (MissingApiKey names the variable) and returns a lane that is
an async context manager owning its httpx clients (`local-rag` too, with nothing to own).
`price_for(lane)` is the per-task list price for the price seed: (usd, basis, snapshot); the
prices themselves are the vendors' (collectors.vendors.<vendor>), written there once, and
each vendor lane runs its vendor's research module (collectors.vendors.<vendor>.research).

Retries (providers.md §0, [N-DR]): submit 8 attempts, full jitter, base 1 s, cap 45 s;
synchronous vendors (one long call) 3 attempts with a long attempt timeout, because a retry
re-runs and re-bills the research; polls 3 attempts per call, and the driver tolerates
`max_poll_failures` failed poll calls in a row.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import httpx
from aiolimiter import AsyncLimiter

from collectors.draco.model import ResearchLane
from collectors.draco.systems import local_rag
from collectors.draco.systems.driver import (
    DrivenLane,
    PollSchedule,
    VendorApi,
    api_key_for,
    shared_limiter,
)
from collectors.draco.systems.local_rag import ClosedBookResearchLane, LocalRagLane
from collectors.http import CallPolicy
from collectors.vendors import exa as exa_vendor
from collectors.vendors import nimble as nimble_vendor
from collectors.vendors import parallel as parallel_vendor
from collectors.vendors import tavily as tavily_vendor
from collectors.vendors import valyu as valyu_vendor
from collectors.vendors import youcom as youcom_vendor
from collectors.vendors.exa import research as exa
from collectors.vendors.gemini import research as gemini
from collectors.vendors.nimble import research as nimble
from collectors.vendors.openai import research as openai_responses
from collectors.vendors.parallel import research as parallel
from collectors.vendors.perplexity import research as perplexity
from collectors.vendors.tavily import research as tavily
from collectors.vendors.valyu import research as valyu
from collectors.vendors.youcom import research as youcom

LOCAL_RAG = "local-rag"
MAX_POLL_FAILURES = 6  # consecutive failed poll calls before the attempt fails ([V]: 6)

SUBMIT_POLICY = CallPolicy(
    max_attempts=8,
    backoff_base_s=1.0,
    backoff_cap_s=45.0,
    budget_s=600.0,
    retry_after_cap_s=120.0,
    read_timeout_s=120.0,
    attempt_timeout_s=180.0,
)
POLL_POLICY = CallPolicy(
    max_attempts=3, backoff_base_s=1.0, backoff_cap_s=10.0, budget_s=120.0, attempt_timeout_s=120.0
)
# A synchronous research call: minutes of work in one request.
SYNC_POLICY = SUBMIT_POLICY.with_overrides(
    max_attempts=3, budget_s=1_800.0, read_timeout_s=900.0, attempt_timeout_s=900.0
)
YOUCOM_POLICY = SYNC_POLICY.with_overrides(read_timeout_s=600.0, attempt_timeout_s=600.0)


@dataclass(frozen=True)
class ResearchLaneSpec:
    lane: str
    provider: str
    api: VendorApi | None  # None: the offline lane
    poll_interval_s: float | None = None  # None: synchronous (or offline)
    poll_deadline_s: float | None = None
    submit_policy: CallPolicy = SUBMIT_POLICY
    poll_policy: CallPolicy = POLL_POLICY
    rate_per_s: float = 2.0
    concurrency: int = 8
    rate_group: str = ""  # lanes sharing one vendor key share a limiter (see make_lane)
    price_usd_per_task: float | None = None
    price_basis: str | None = None  # list_price | estimate
    price_snapshot: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key_env(self) -> str | None:
        return None if self.api is None else self.api.key_env


def _vendor(
    lane: str, api: VendorApi, interval_s: float | None, deadline_s: float | None, **more: Any
) -> ResearchLaneSpec:
    return ResearchLaneSpec(
        lane=lane,
        provider=api.provider,
        api=api,
        poll_interval_s=interval_s,
        poll_deadline_s=deadline_s,
        rate_group=api.provider,
        **more,
    )


HOUR = 3_600.0

_SPECS: list[ResearchLaneSpec] = [
    *(
        _vendor(
            f"nimble_agent_{tier}",
            nimble.NimbleAgentApi(effort=effort),
            5.0,
            HOUR,
            price_usd_per_task=nimble_vendor.AGENT_USD_PER_TASK.get(tier),
            price_basis=(
                nimble_vendor.AGENT_PRICE_BASIS
                if tier in nimble_vendor.AGENT_USD_PER_TASK
                else None
            ),
        )
        for tier, effort in nimble.EFFORTS.items()
    ),
    *(_vendor(f"exa_agent_{e}", exa.ExaAgentApi(effort=e), 2.0, HOUR) for e in exa.EFFORTS),
    _vendor(
        "exa_deep_reasoning",
        exa.ExaDeepReasoningApi(),
        None,
        None,
        submit_policy=SYNC_POLICY,
        price_usd_per_task=exa_vendor.DEEP_REASONING_USD_PER_TASK,
        price_basis="list_price",
    ),
    *(
        _vendor(
            f"parallel_task_{processor}",
            parallel.ParallelTaskApi(processor=processor),
            20.0,
            3 * HOUR,
            price_usd_per_task=per_1k / 1000,
            price_basis="list_price",
        )
        for processor, per_1k in parallel_vendor.TASK_USD_PER_1K.items()
    ),
    _vendor(
        "openai_gpt55_web",
        openai_responses.OpenAiResponsesApi(model="gpt-5.5"),
        None,
        None,
        submit_policy=SYNC_POLICY,
    ),
    _vendor(
        "openai_gpt55pro_web",
        openai_responses.OpenAiResponsesApi(model="gpt-5.5-pro"),
        None,
        None,
        submit_policy=SYNC_POLICY,
    ),
    _vendor(
        "openai_o3_deep_research",
        openai_responses.OpenAiResponsesApi(model="o3-deep-research", background=True),
        30.0,
        HOUR,
    ),
    _vendor(
        "openai_o4mini_deep_research",
        openai_responses.OpenAiResponsesApi(model="o4-mini-deep-research", background=True),
        30.0,
        HOUR,
    ),
    *(
        _vendor(lane, gemini.GeminiDeepResearchApi(agent=agent), 10.0, HOUR)
        for lane, agent in gemini.AGENTS.items()
    ),
    *(
        _vendor(
            f"valyu_{mode}",
            valyu.ValyuDeepResearchApi(mode=mode),
            15.0,
            HOUR,
            price_usd_per_task=valyu_vendor.DEEPRESEARCH_USD_PER_TASK.get(mode),
            price_basis="list_price" if mode in valyu_vendor.DEEPRESEARCH_USD_PER_TASK else None,
        )
        for mode in valyu.MODES
    ),
    _vendor(
        "youcom_research_exhaustive",
        youcom.YouResearchApi(),
        None,
        None,
        submit_policy=YOUCOM_POLICY,
        price_usd_per_task=youcom_vendor.RESEARCH_USD_PER_TASK,
        price_basis="list_price",
    ),
    *(
        _vendor(
            f"tavily_research_{model}",
            tavily.TavilyResearchApi(model=model),
            10.0,
            1_800.0,
            price_usd_per_task=tavily_vendor.RESEARCH_USD_PER_TASK.get(model),
            price_basis=(
                tavily_vendor.RESEARCH_PRICE_BASIS
                if model in tavily_vendor.RESEARCH_USD_PER_TASK
                else None
            ),
            submit_policy=SUBMIT_POLICY.with_overrides(
                extra_abort_statuses=tavily_vendor.ABORT_STATUSES
            ),
            poll_policy=POLL_POLICY.with_overrides(
                extra_abort_statuses=tavily_vendor.ABORT_STATUSES
            ),
        )
        for model in tavily.MODELS
    ),
    # The Agent API with the deep-research preset, in the background (the lane name is fixed).
    _vendor("perplexity_sonar_deep_research", perplexity.PerplexityDeepResearchApi(), 10.0, HOUR),
    # The offline stand-ins (local-rag at three depths, the closed-book control): demo prices.
    *(
        ResearchLaneSpec(
            lane=lane,
            provider="offline",
            api=None,
            price_usd_per_task=price,
            price_basis=local_rag.DEMO_PRICE_BASIS,
            settings={"offline_stand_in": True},
        )
        for lane, price in local_rag.DEMO_PRICE_USD_PER_TASK.items()
    ),
]

LANES: Mapping[str, ResearchLaneSpec] = MappingProxyType({spec.lane: spec for spec in _SPECS})
VENDOR_KEY_ENVS: tuple[str, ...] = tuple(
    sorted({name for spec in _SPECS if spec.api is not None for name in spec.api.key_envs})
)


class LaneConfigError(ValueError):
    """A lane cannot be built as asked; the message says what is missing."""


def price_for(lane: str) -> tuple[float | None, str | None, str | None]:
    """(USD per task, basis, snapshot date) of the lane's list price; (None, None, None) when
    no per-task price is documented (usage-priced or unknown lanes). Snapshot dates are not
    stated by the sources providers.md quotes, hence None."""
    spec = _spec(lane)
    return spec.price_usd_per_task, spec.price_basis, spec.price_snapshot


def make_lane(
    name: str,
    *,
    base_urls: Mapping[str, str] | None = None,  # by lane or by provider
    environ: Mapping[str, str] | None = None,
    http_client: httpx.AsyncClient | None = None,  # one shared client (tests: MockTransport)
    poll_interval_s: float | None = None,
    poll_deadline_s: float | None = None,
    max_poll_failures: int | None = None,
    policy_changes: Mapping[str, Any] | None = None,  # CallPolicy fields, submit and poll
    rate_per_s: float | None = None,
    concurrency: int | None = None,
    limiters: MutableMapping[str, AsyncLimiter] | None = None,  # share one per vendor key
    corpus: Any = None,  # local-rag*: a PassageCorpus, or a path for load_local_corpus
) -> ResearchLane:
    spec = _spec(name)
    if name == local_rag.CLOSED_BOOK:
        return ClosedBookResearchLane()
    if spec.api is None:
        passages_k, documents_k, sentences = local_rag.VARIANTS[name]
        return LocalRagLane(
            _passage_corpus(corpus),
            passages_k=passages_k,
            documents_k=documents_k,
            sentences_per_document=sentences,
            lane=name,
        )
    environ = os.environ if environ is None else environ
    api_key_for(spec.api, environ)  # MissingApiKey now, before anything is written
    urls = dict(base_urls or {})
    changes = dict(policy_changes or {})
    schedule = None
    if spec.poll_interval_s is not None:
        schedule = PollSchedule(
            interval_s=spec.poll_interval_s if poll_interval_s is None else poll_interval_s,
            deadline_s=spec.poll_deadline_s if poll_deadline_s is None else poll_deadline_s,
            max_consecutive_failures=max_poll_failures or MAX_POLL_FAILURES,
        )
    rate = spec.rate_per_s if rate_per_s is None else rate_per_s
    price, basis, snapshot = price_for(name)
    return DrivenLane(
        lane=spec.lane,
        api=spec.api,
        base_url=urls.get(spec.lane) or urls.get(spec.provider) or spec.api.base_url,
        submit_policy=spec.submit_policy.with_overrides(**changes),
        poll_policy=spec.poll_policy.with_overrides(**changes),
        schedule=schedule,
        rate_per_s=rate,
        concurrency=spec.concurrency if concurrency is None else concurrency,
        # Every key this process could hold, not only the lane's own: an echo of any is caught.
        redactor_secrets=tuple(environ.get(var, "") for var in VENDOR_KEY_ENVS),
        environ=environ,
        http_client=http_client,
        limiter=shared_limiter(limiters, spec.rate_group, rate),
        price={
            "price_usd_per_task": price,
            "price_basis": basis,
            "price_snapshot": snapshot,
        },
    )


def _spec(lane: str) -> ResearchLaneSpec:
    try:
        return LANES[lane]
    except KeyError:
        raise LaneConfigError(
            f"unknown research lane {lane!r}; known: {', '.join(LANES)}"
        ) from None


def _passage_corpus(corpus: Any):
    from collectors.local_corpus import PassageCorpus, load_local_corpus

    if isinstance(corpus, PassageCorpus):
        return corpus
    if isinstance(corpus, str | Path):
        return load_local_corpus(Path(corpus))
    raise LaneConfigError(
        "lane local-rag needs a local corpus: a PassageCorpus, a corpus directory "
        "(ground-truth.json + html/) or a documents .jsonl"
    )


__all__ = [
    "LANES",
    "LOCAL_RAG",
    "VENDOR_KEY_ENVS",
    "LaneConfigError",
    "ResearchLaneSpec",
    "make_lane",
    "price_for",
]
