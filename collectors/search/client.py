"""Run-scoped access to the search lanes: one HTTP pool, one throttle per lane (limiters shared
per rate group), keys read from the environment on first use.

    async with SearchClient(["exa_search_auto"]) as search:
        result = await search.search("exa_search_auto", question, item_id=item_id)
        # result.payload -> append; chunks_payload(result, event_id) -> append

`search` raises `LaneAborted` (401/402/403; its payload still has to be appended) and
`MissingApiKey`; every other outcome, failures included, comes back as a `SearchResult` (a
`collectors.http.CallResult` whose value is the ranked chunks).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import httpx
from aiolimiter import AsyncLimiter

from collectors.http import (
    CallOutcome,
    CallPolicy,
    CallResult,
    Channel,
    ErrorClass,
    LaneAborted,
    MissingApiKey,
    Redactor,
    Throttle,
    api_key_from_env,
    call_provider,
    rate_limiter,
    slot_clients,
)
from collectors.http.json_fields import parse_body
from collectors.search.lanes import LANES, LaneSpec
from warehouse.events import Chunk, ChunksNormalized, ProviderCallFailed, SystemRef

PREFLIGHT_QUERY = "What is the capital of France?"
PREFLIGHT_ITEM_ID = "preflight"


# A search call's result: the chunks of a completed call (`collectors.http.CallResult`).
SearchResult = CallResult[list[Chunk]]


def chunks_payload(result: SearchResult, source_event_id: str) -> ChunksNormalized | None:
    """The chunks_normalized payload derived from a completed call's event."""
    if not result.completed or result.normalizer_version is None:
        return None
    payload = result.payload
    return ChunksNormalized(
        lane=result.lane,
        item_id=payload.item_id,
        attempt=payload.attempt,
        normalizer_version=result.normalizer_version,
        source_event_id=source_event_id,
        chunks=result.value or [],
    )


PreflightStatus = Literal["ok", "auth_failed", "rejected", "unreachable", "missing_key"]


@dataclass(frozen=True)
class PreflightReport:
    lane: str
    status: PreflightStatus
    detail: str
    outcome: CallOutcome | None = None  # the (billed) 1-result call, stage "preflight"

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class SearchClient:
    def __init__(
        self,
        lanes: Iterable[str] | None = None,
        *,
        base_urls: Mapping[str, str] | None = None,  # by lane or by provider
        rate_per_s: float | Mapping[str, float] | None = None,  # one value, or by rate group
        concurrency: int | Mapping[str, int] | None = None,  # one value, or by lane
        policy_changes: Mapping[str, Any] | None = None,  # CallPolicy fields, all lanes
        environ: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,  # one shared client (e.g. MockTransport)
    ):
        names = list(LANES) if lanes is None else list(lanes)
        unknown = [name for name in names if name not in LANES]
        if unknown:
            raise ValueError(f"unknown lane(s) {unknown}; known: {sorted(LANES)}")
        self.specs = {name: LANES[name] for name in names}
        self._base_urls = dict(base_urls or {})
        self._rate = rate_per_s
        self._concurrency = concurrency
        self._policy_changes = dict(policy_changes or {})
        self._environ = os.environ if environ is None else environ
        self._shared_client = http_client
        self._clients: dict[str, tuple[httpx.AsyncClient, ...]] = {}
        self._channels: dict[str, Channel] = {}
        self._throttles: dict[str, Throttle] = {}

    # --- lifecycle ----------------------------------------------------------------------------

    async def __aenter__(self) -> SearchClient:
        limiters: dict[str, AsyncLimiter] = {}
        for name, spec in self.specs.items():
            rate = self.rate_for(spec)
            limiter = limiters.setdefault(spec.rate_group, rate_limiter(rate))
            throttle = Throttle(rate, self.concurrency_for(spec), limiter=limiter)
            self._throttles[name] = throttle
            if self._shared_client is not None:
                self._clients[name] = (self._shared_client,)
            else:
                self._clients[name] = slot_clients(throttle.concurrency)
        return self

    async def __aexit__(self, *exc: object) -> None:
        clients = [c for group in self._clients.values() for c in group]
        self._clients.clear()
        self._channels.clear()
        if self._shared_client is None:
            await asyncio.gather(*(client.aclose() for client in clients))

    # --- configuration ------------------------------------------------------------------------

    def rate_for(self, spec: LaneSpec) -> float:
        if isinstance(self._rate, int | float):
            return float(self._rate)
        return float((self._rate or {}).get(spec.rate_group, spec.rate_per_s))

    def concurrency_for(self, spec: LaneSpec) -> int:
        if isinstance(self._concurrency, int):
            return self._concurrency
        return int((self._concurrency or {}).get(spec.lane, spec.concurrency))

    def policy_for(self, spec: LaneSpec) -> CallPolicy:
        return spec.policy.with_overrides(**self._policy_changes)

    def system_ref(self, lane: str) -> SystemRef:
        """The lane's SystemRef with this client's effective rate, concurrency and policy."""
        spec = self.specs[lane]
        return spec.system_ref(
            rate_per_s=self.rate_for(spec),
            concurrency=self.concurrency_for(spec),
            policy=self.policy_for(spec),
        )

    def base_url_for(self, spec: LaneSpec) -> str:
        return self._base_urls.get(spec.lane) or self._base_urls.get(spec.provider) or spec.base_url

    def channel(self, lane: str) -> Channel:
        if lane not in self._channels:
            if lane not in self._clients:
                raise RuntimeError("use SearchClient as `async with SearchClient(...) as search`")
            spec = self.specs[lane]
            api_key_from_env(spec.key_env, self._environ)  # fail early, by name
            self._channels[lane] = Channel(
                lane=lane,
                provider=spec.provider,
                clients=self._clients[lane],
                throttle=self._throttles[lane],
                policy=self.policy_for(spec),
                redactor=self._redactor(),
                vendor_request_id=spec.vendor_request_id,
                body_failure=spec.body_failure,
            )
        return self._channels[lane]

    def _redactor(self) -> Redactor:
        # Every key this process could hold, not only the lane's own: a response or an error
        # echoing any of them is caught.
        env_vars = {spec.key_env for spec in LANES.values()}
        return Redactor(self._environ.get(name, "") for name in sorted(env_vars))

    # --- calls --------------------------------------------------------------------------------

    async def search(
        self, lane: str, query: str, *, item_id: str, attempt: int = 1, stage: str = "search"
    ) -> SearchResult:
        spec = self.specs[lane]
        channel = self.channel(lane)
        request = spec.build_request(
            self.base_url_for(spec),
            api_key_from_env(spec.key_env, self._environ),
            query,
            spec.max_results,
        )
        outcome = await call_provider(
            channel, request, stage=stage, item_id=item_id, attempt=attempt
        )
        return spec.result(outcome)

    async def preflight(self, lane: str, *, attempt: int = 1) -> PreflightReport:
        """One 1-result call, no retries: is the key accepted and the endpoint reachable?"""
        spec = self.specs[lane]
        try:
            channel = self.channel(lane)
            key = api_key_from_env(spec.key_env, self._environ)
        except MissingApiKey as exc:
            return PreflightReport(lane, "missing_key", str(exc))
        base_url = self.base_url_for(spec)
        if spec.healthcheck_path is not None:
            problem = await _healthcheck(channel, f"{base_url.rstrip('/')}{spec.healthcheck_path}")
            if problem is not None:
                return PreflightReport(lane, "unreachable", f"healthcheck: {problem}")
        single = dataclasses.replace(channel, policy=channel.policy.with_overrides(max_attempts=1))
        request = spec.build_request(base_url, key, PREFLIGHT_QUERY, 1)
        try:
            outcome = await call_provider(
                single, request, stage="preflight", item_id=PREFLIGHT_ITEM_ID, attempt=attempt
            )
        except LaneAborted as aborted:
            return PreflightReport(lane, "auth_failed", str(aborted), aborted.outcome)
        if outcome.completed:
            found = len(spec.normalize(outcome.body_json))
            return PreflightReport(
                lane, "ok", f"HTTP {outcome.status_code}, {found} result(s)", outcome
            )
        payload = outcome.payload
        # A 200 the vendor marks as failed (Firecrawl `success: false`) came from a reachable
        # host that refused the call: a rejection, not an unreachable host.
        answered = payload.landed or payload.error_class == ErrorClass.VENDOR_FAILED
        status: PreflightStatus = "rejected" if answered else "unreachable"
        return PreflightReport(lane, status, _failure_summary(payload), outcome)


def _failure_summary(payload: ProviderCallFailed) -> str:
    """What a failed preflight prints: our error class, the HTTP status and the vendor's error
    code, never the vendor's error text (it is printed, and an error string may quote the
    request, key included); the full record is the outcome's payload."""
    facts = [f"HTTP {payload.status_code}"] if payload.status_code is not None else []
    code = _vendor_code(payload.raw_body)
    if code is not None:
        facts.append(f"vendor code {code}")
    return f"{payload.error_class} ({', '.join(facts)})" if facts else str(payload.error_class)


def _vendor_code(raw_body: str | None) -> str | None:
    """The vendor's machine-readable error code (`code`, or `error.code`), when short and plain."""
    document = parse_body(raw_body) if raw_body else None
    if not isinstance(document, dict):
        return None
    code = document.get("code")
    if code is None and isinstance(document.get("error"), dict):
        code = document["error"].get("code")
    if isinstance(code, int) and not isinstance(code, bool):
        return str(code)
    if isinstance(code, str) and re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", code):
        return code
    return None


async def _healthcheck(channel: Channel, url: str) -> str | None:
    """None when the host answers 200 or 404 (both mean "up" for Nimble), else what went wrong."""
    try:
        async with channel.throttle.slot(), asyncio.timeout(channel.policy.attempt_timeout_s):
            response = await channel.client.get(url, timeout=channel.timeout)
    except (TimeoutError, httpx.HTTPError) as exc:
        return channel.redactor.text(type(exc).__name__)
    if response.status_code in (200, 404):
        return None
    return f"HTTP {response.status_code}"


def chunks_from_raw_body(lane: str, raw_body: str) -> list[Chunk]:
    """Re-normalize a stored raw body with the lane's current normaliser."""
    return LANES[lane].normalize(parse_body(raw_body))
