"""The live-extraction engines: the local engines (fed by the local fetcher) and the vendor
engines (one module each, over `collectors.http`), as one explicit registry.

A vendor engine's price, SDK check and wire shape live in its module; the registry only says
which module backs which lane and with which fixed setting (Tavily's depth).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType, ModuleType
from typing import Any

import httpx

from collectors.extraction.engines import ENGINES as LOCAL_ENGINES
from collectors.extraction.engines import Engine
from collectors.http import (
    CallPolicy,
    CallResult,
    Channel,
    Redactor,
    Throttle,
    api_key_from_env,
    call_provider,
    slot_clients,
)
from collectors.products.extract import VendorRead
from collectors.vendors import tavily as tavily_vendor
from collectors.vendors.exa import extract as exa
from collectors.vendors.firecrawl import extract as firecrawl
from collectors.vendors.nimble import extract as nimble
from collectors.vendors.parallel import extract as parallel
from collectors.vendors.tavily import extract as tavily
from warehouse.events import SystemRef

# Providers' own fetch budgets sit below this attempt deadline; 2 retries on 5xx/429 (providers.md §0).
VENDOR_POLICY = CallPolicy(
    max_attempts=3,
    backoff_base_s=0.5,
    backoff_cap_s=5.0,
    budget_s=90.0,
    attempt_timeout_s=75.0,
    read_timeout_s=70.0,
)
STAGE = "extract"


@dataclass(frozen=True)
class VendorEngine:
    name: str
    module: ModuleType
    build_request: Callable[..., Any]  # (base_url, key, url, render) -> ProviderRequest
    read: Callable[[Any, str], VendorRead]
    price_usd_per_1k: float | None
    settings: Mapping[str, Any] = field(default_factory=dict)
    concurrency: int = 4
    rate_per_s: float = 5.0
    policy: CallPolicy = VENDOR_POLICY

    @property
    def provider(self) -> str:
        return self.module.PROVIDER

    def system_ref(self) -> SystemRef:
        module = self.module
        return SystemRef(
            name=self.name,
            version=f"{self.name}@1",
            settings={
                "kind": "vendor",
                "provider": module.PROVIDER,
                "endpoint": module.PATH,
                **self.settings,
                "price_usd_per_1k": self.price_usd_per_1k,
                "price_basis": module.PRICE_BASIS,
                "price_snapshot": module.PRICE_SNAPSHOT,
                "sdk_checked": f"{module.SDK_CHECK.package}=={module.SDK_CHECK.version}",
                "docs": module.DOCS,
                "checked_on": module.SDK_CHECK.checked_on,
                "retry": {
                    "max_attempts": VENDOR_POLICY.max_attempts,
                    "budget_s": VENDOR_POLICY.budget_s,
                },
            },
        )


def _tavily(depth: str) -> VendorEngine:
    return VendorEngine(
        name=f"tavily_extract_{depth}",
        module=tavily,
        build_request=lambda base, key, url, render: tavily.build_request(base, key, url, depth),
        read=partial(tavily.read, depth=depth),
        price_usd_per_1k=tavily.PRICE_USD_PER_1K[depth],
        settings={"extract_depth": depth},
        # The key's documented quota statuses stop the lane like a 402 (one list: the search module's).
        policy=VENDOR_POLICY.with_overrides(extra_abort_statuses=tavily_vendor.ABORT_STATUSES),
    )


VENDOR_ENGINES: Mapping[str, VendorEngine] = MappingProxyType(
    {
        engine.name: engine
        for engine in (
            VendorEngine(
                "nimble_extract", nimble, nimble.build_request, nimble.read, nimble.PRICE_USD_PER_1K
            ),
            VendorEngine(
                "firecrawl_scrape",
                firecrawl,
                firecrawl.build_request,
                firecrawl.read,
                firecrawl.PRICE_USD_PER_1K,
            ),
            VendorEngine("exa_contents", exa, exa.build_request, exa.read, exa.PRICE_USD_PER_1K),
            _tavily("basic"),
            _tavily("advanced"),
            VendorEngine(
                "parallel_extract",
                parallel,
                parallel.build_request,
                parallel.read,
                parallel.PRICE_USD_PER_1K,
            ),
        )
    }
)
DEFAULT_LOCAL = ("trafilatura", "readability-lxml", "html-text")


def local_system_ref(engine: Engine, fetch_settings: Mapping[str, Any]) -> SystemRef:
    ref = engine.system_ref()
    return ref.model_copy(
        update={
            "settings": {
                **ref.settings,
                "kind": "local",
                "fetcher": dict(fetch_settings),
                "price_usd_per_1k": 0.0,
                "price_basis": "local: no billed requests",
            }
        }
    )


def known_engines() -> list[str]:
    return sorted([*LOCAL_ENGINES, *VENDOR_ENGINES])


def split_engines(names: Iterable[str]) -> tuple[list[Engine], list[VendorEngine]]:
    """(local engines, vendor engines) for `names`; raises ValueError naming the unknown ones."""
    local, vendors, unknown = [], [], []
    for name in names:
        if name in LOCAL_ENGINES:
            local.append(LOCAL_ENGINES[name])
        elif name in VENDOR_ENGINES:
            vendors.append(VENDOR_ENGINES[name])
        else:
            unknown.append(name)
    if unknown:
        raise ValueError(
            f"unknown extraction engine(s) {', '.join(unknown)}; known: {', '.join(known_engines())}"
        )
    return local, vendors


class VendorClient:
    """Run-scoped access to the vendor engines: one throttle and slot clients per lane; keys
    read from the environment (by name) on first use; base URLs overridable per provider."""

    def __init__(
        self,
        engines: Iterable[VendorEngine],
        *,
        base_urls: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
    ):
        self.engines = {engine.name: engine for engine in engines}
        self._base_urls = dict(base_urls or {})
        self._environ = os.environ if environ is None else environ
        self._clients: dict[str, tuple[httpx.AsyncClient, ...]] = {}
        self._channels: dict[str, Channel] = {}

    def check_keys(self) -> None:
        """Fail before anything is written when a key is missing (MissingApiKey names it)."""
        for engine in self.engines.values():
            api_key_from_env(engine.module.KEY_ENV, self._environ)

    async def __aenter__(self) -> VendorClient:
        redactor = Redactor(
            self._environ.get(e.module.KEY_ENV, "") for e in VENDOR_ENGINES.values()
        )
        for name, engine in self.engines.items():
            clients = slot_clients(engine.concurrency)
            self._clients[name] = clients
            self._channels[name] = Channel(
                lane=name,
                provider=engine.provider,
                clients=clients,
                throttle=Throttle(engine.rate_per_s, engine.concurrency),
                policy=engine.policy,
                redactor=redactor,
            )
        return self

    async def __aexit__(self, *exc: object) -> None:
        clients = [client for group in self._clients.values() for client in group]
        self._clients.clear()
        self._channels.clear()
        await asyncio.gather(*(client.aclose() for client in clients))

    def base_url(self, engine: VendorEngine) -> str:
        return (
            self._base_urls.get(engine.name)
            or self._base_urls.get(engine.provider)
            or engine.module.BASE_URL
        )

    async def extract(
        self, name: str, url: str, render: str, *, item_id: str, attempt: int
    ) -> CallResult[VendorRead]:
        """The call as the one call-result type: its payload (to append first) and, when it
        completed, what the vendor says about `url` (`value`). Raises LaneAborted."""
        engine = self.engines[name]
        key = api_key_from_env(engine.module.KEY_ENV, self._environ)
        request = engine.build_request(self.base_url(engine), key, url, render)
        outcome = await call_provider(
            self._channels[name], request, stage=STAGE, item_id=item_id, attempt=attempt
        )
        return CallResult.of(
            outcome,
            partial(engine.read, url=url),
            normalizer_version=engine.system_ref().version,
            price_usd_per_1k=engine.price_usd_per_1k,
        )
