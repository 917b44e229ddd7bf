"""The one async driver every vendor research lane runs on: submit -> poll -> result.

A vendor module only describes its endpoints and documents (a `VendorApi`); this module does
the rest the same way for all of them:

- every HTTP exchange goes through `collectors.http.call_provider` and its payload is appended
  through `emit` *before* the driver looks at it, so the raw record survives a crash;
- stages are `research:submit`, `research:poll:<n>`, `research:result` (then
  `research:result:<n>` while a result endpoint answers "not yet", e.g. Nimble's 409);
- polls tolerate transient failures: a failed poll call is recorded and polling goes on, up to
  `max_poll_failures` in a row; the submit call has the patient retry policy of [N-DR];
- 401/402/403 anywhere (and a vendor's own lane-abort statuses, `CallPolicy.
  extra_abort_statuses`, e.g. Tavily's 432/433): the failed call is appended, then `LaneAborted` propagates, except a
  401/403 on a status poll of a vendor whose status endpoint is known to answer those
  transiently (`VendorApi.poll_auth_retries`, Valyu): those count as failed polls, bounded;
- the terminal `ResearchCompleted` / `ResearchFailed` is returned, not appended (the runner
  appends it). Empty report text is a failure (`empty_output`), scored 0.0 downstream.

Clocks: `wall_clock_ms` runs from just before the submit call to the final result (queue and
polling included, methodology §1.4); `queue_ms` is the time until a poll first reports the run
running after it was seen queued (None when the vendor never shows a queued state).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

import httpx
from aiolimiter import AsyncLimiter

from collectors.draco.model import Emit, RubricTask
from collectors.http import (
    CallOutcome,
    CallPolicy,
    Channel,
    LaneAborted,
    MissingApiKey,
    ProviderRequest,
    Redactor,
    Throttle,
    api_key_from_env,
    call_provider,
    rate_limiter,
    slot_clients,
)
from collectors.products.research import Report, RunState, VendorApi, VendorShapeError
from warehouse.canonical import sha256_hex
from warehouse.events import (
    ResearchCompleted,
    ResearchFailed,
    SystemRef,
    utc_now_iso,
)

STAGE_SUBMIT = "research:submit"
STAGE_RESULT = "research:result"


def poll_stage(n: int) -> str:
    return f"research:poll:{n}"


def result_stage(n: int) -> str:
    return STAGE_RESULT if n == 1 else f"{STAGE_RESULT}:{n}"


@dataclass(frozen=True)
class PollSchedule:
    interval_s: float
    deadline_s: float  # from submit; past it the attempt fails with error_class poll_deadline
    max_consecutive_failures: int = 6


# A preflight call is retried like a poll (5xx, 429, timeouts, connection errors), so one
# transient fault does not abort the run (#14); a refused key is never retried.
PREFLIGHT_ATTEMPTS = 3
NOT_CHECKED = "not checked: any call starts a paid run"
# The refusals a status poll may answer transiently (`VendorApi.poll_auth_retries`); any other
# lane-abort status (402 credit, a vendor's plan limit such as Tavily's 432/433) stops at once.
TRANSIENT_POLL_AUTH_STATUSES = frozenset({401, 403})


class _Failed(Exception):
    def __init__(self, stage: str, error_class: str, message: str):
        super().__init__(message)
        self.stage = stage
        self.error_class = error_class
        self.message = message


class DrivenLane:
    """A vendor research lane: `async with` it (it owns its httpx clients), then call
    `research` for as many tasks as the runner likes, concurrently."""

    def __init__(
        self,
        *,
        lane: str,
        api: VendorApi,
        base_url: str,
        submit_policy: CallPolicy,
        poll_policy: CallPolicy,
        schedule: PollSchedule | None,
        rate_per_s: float,
        concurrency: int,
        redactor_secrets: tuple[str, ...] = (),
        environ: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        limiter: AsyncLimiter | None = None,
        price: Mapping[str, Any] | None = None,
    ):
        self.lane = lane
        self.provider = api.provider
        self.api = api
        self.base_url = base_url
        self.submit_policy = submit_policy
        self.poll_policy = poll_policy
        self.schedule = schedule
        self.rate_per_s = rate_per_s
        self.concurrency = concurrency
        self._environ = os.environ if environ is None else environ
        self._secrets = redactor_secrets
        self._shared_client = http_client
        self._limiter = limiter
        self._price = dict(price or {})
        self._clients: tuple[httpx.AsyncClient, ...] = ()
        self._submit_channel: Channel | None = None
        self._poll_channel: Channel | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    async def __aenter__(self) -> DrivenLane:
        api_key_for(self.api, self._environ)  # fail early, by name
        throttle = Throttle(self.rate_per_s, self.concurrency, limiter=self._limiter)
        if self._shared_client is not None:
            self._clients = (self._shared_client,)
        else:
            self._clients = slot_clients(self.concurrency)
        redactor = Redactor(self._secrets)

        def channel(policy: CallPolicy) -> Channel:
            return Channel(
                lane=self.lane,
                provider=self.provider,
                clients=self._clients,
                throttle=throttle,
                policy=policy,
                redactor=redactor,
                vendor_request_id=self.api.vendor_request_id,
            )

        self._submit_channel = channel(self.submit_policy)
        self._poll_channel = channel(self.poll_policy)
        return self

    async def __aexit__(self, *exc: object) -> None:
        clients, self._clients = self._clients, ()
        self._submit_channel = self._poll_channel = None
        if self._shared_client is None:
            await asyncio.gather(*(client.aclose() for client in clients))

    # --- identity -----------------------------------------------------------------------------

    def system_ref(self) -> SystemRef:
        schedule = self.schedule
        return SystemRef(
            name=self.lane,
            version=self.api.version,
            settings={
                "provider": self.provider,
                **self.api.settings(),
                "base_url": self.base_url,
                "poll_interval_s": None if schedule is None else schedule.interval_s,
                "poll_deadline_s": None if schedule is None else schedule.deadline_s,
                "max_consecutive_poll_failures": (
                    None if schedule is None else schedule.max_consecutive_failures
                ),
                "rate_per_s": self.rate_per_s,
                "concurrency": self.concurrency,
                "submit_retry": _policy_settings(self.submit_policy),
                "poll_retry": _policy_settings(self.poll_policy),
                **self._price,
            },
        )

    # --- preflight ----------------------------------------------------------------------------

    async def preflight(self) -> tuple[str, str]:
        """(status, detail) before any spend (methodology §5.17), with no research started.

        The vendor's zero-cost probe (`VendorApi.preflight_probe`) is sent with up to
        PREFLIGHT_ATTEMPTS attempts for transient faults: an expected answer is "ok" and the
        detail says what it rests on ("key accepted (models list → HTTP 200)", or for an
        unknown-id probe "reachable, key not refused (HTTP 404 for an unknown run id; key
        validity not proven)"); 401/402/403 is "auth_failed"; any other
        answer is "unexpected" (a wrong base URL or path answers like that); no answer is
        "unreachable". A vendor without a zero-cost check is not called: "skipped", NOT_CHECKED.
        """
        if self._poll_channel is None:
            raise RuntimeError(f"use the lane as `async with make_lane({self.lane!r}) as lane`")
        key = api_key_for(self.api, self._environ)
        probe = self.api.preflight_probe(self.base_url, key)
        if probe is None:
            return "skipped", NOT_CHECKED
        channel = Channel(
            lane=self.lane,
            provider=self.provider,
            clients=self._poll_channel.clients,
            throttle=self._poll_channel.throttle,
            policy=self.poll_policy.with_overrides(max_attempts=PREFLIGHT_ATTEMPTS),
            redactor=self._poll_channel.redactor,
            vendor_request_id=self.api.vendor_request_id,
        )
        try:
            outcome = await call_provider(
                channel, probe.request, stage="preflight", item_id="preflight", attempt=1
            )
        except LaneAborted as aborted:
            return "auth_failed", str(aborted)
        if not outcome.landed:
            return "unreachable", f"{outcome.error_class}: {outcome.payload.error_message}"
        answer = f"{probe.what} → HTTP {outcome.status_code}"
        if outcome.status_code in probe.ok_statuses:
            return "ok", probe.ok_detail(outcome.status_code)
        # No response body in the detail: it is printed, and a vendor's error may echo the key.
        return "unexpected", f"{answer}, expected HTTP {sorted(probe.ok_statuses)}"

    # --- one task -----------------------------------------------------------------------------

    async def research(
        self, task: RubricTask, instruction: str, *, attempt: int, emit: Emit
    ) -> ResearchCompleted | ResearchFailed:
        if self._submit_channel is None:
            raise RuntimeError(f"use the lane as `async with make_lane({self.lane!r}) as lane`")
        attempt_run = _Attempt(self, task, attempt, emit)
        return await attempt_run.run(instruction)


@dataclass
class _Attempt:
    lane: DrivenLane
    task: RubricTask
    attempt: int
    emit: Emit
    event_ids: list[str] = field(default_factory=list)
    polls: int = 0
    started: float = 0.0
    queue_ms: float | None = None
    seen_queued: bool = False
    run_id: str | None = None

    @property
    def api(self) -> VendorApi:
        return self.lane.api

    def elapsed_ms(self) -> float:
        return (perf_counter() - self.started) * 1000.0

    async def run(self, instruction: str) -> ResearchCompleted | ResearchFailed:
        lane = self.lane
        key = api_key_for(self.api, lane._environ)
        submitted_at = utc_now_iso()
        self.started = perf_counter()
        try:
            report = await self._drive(key, instruction)
        except _Failed as failure:
            return ResearchFailed(
                lane=lane.lane,
                provider=lane.provider,
                item_id=self.task.item_id,
                attempt=self.attempt,
                vendor_run_id=self.run_id,
                stage=failure.stage,
                error_class=failure.error_class,
                error_message=failure.message,
                wall_clock_ms=self.elapsed_ms(),
                source_event_ids=list(self.event_ids),
            )
        wall_clock_ms = self.elapsed_ms()
        schedule = lane.schedule
        return ResearchCompleted(
            lane=lane.lane,
            provider=lane.provider,
            item_id=self.task.item_id,
            attempt=self.attempt,
            vendor_run_id=self.run_id,
            raw_output=report.text,
            raw_citations=list(report.citations),
            instruction_sha256=sha256_hex(instruction.encode("utf-8")),
            submitted_at=submitted_at,
            finished_at=utc_now_iso(),
            queue_ms=self.queue_ms,
            wall_clock_ms=wall_clock_ms,
            poll_interval_s=None if schedule is None else schedule.interval_s,
            polls=self.polls,
            cost_usd=report.cost_usd,
            cost_basis=report.cost_basis if report.cost_usd is not None else None,
            usage=dict(report.usage),
            source_event_ids=list(self.event_ids),
        )

    async def _call(self, channel: Channel, request: ProviderRequest, stage: str) -> CallOutcome:
        try:
            outcome = await call_provider(
                channel, request, stage=stage, item_id=self.task.item_id, attempt=self.attempt
            )
        except LaneAborted as aborted:
            self.event_ids.append(await self.emit(aborted.payload))
            raise
        self.event_ids.append(await self.emit(outcome.payload))
        return outcome

    def _read(self, reader, document: Any, stage: str):
        try:
            return reader(document)
        except VendorShapeError as exc:
            raise _Failed(stage, "malformed_body", str(exc)) from None

    def _observe(self, state: RunState) -> None:
        if state.run_id and self.run_id is None:
            self.run_id = state.run_id
        if state.phase == "queued":
            self.seen_queued = True
        elif state.phase == "running" and self.seen_queued and self.queue_ms is None:
            self.queue_ms = self.elapsed_ms()

    async def _drive(self, key: str, instruction: str) -> Report:
        lane, api = self.lane, self.api
        request = api.submit(lane.base_url, key, instruction)
        outcome = await self._call(lane._submit_channel, request, STAGE_SUBMIT)
        if not outcome.completed:
            raise _Failed("submit", outcome.error_class or "http_status", _describe(outcome))
        submitted = self._read(api.read_submit, outcome.body_json, "parse")
        self._observe(submitted)
        state = await self._poll_until_done(key, submitted)
        if state.phase == "failed":
            detail = state.message or f"vendor status {state.vendor_status!r}"
            stage = "submit" if state is submitted else "poll"
            raise _Failed(stage, "vendor_failed", detail)
        report = state.report
        if report is None:
            report = await self._fetch_result(key, submitted)
        if not report.text.strip():
            raise _Failed("result", "empty_output", "the vendor returned an empty report")
        return report

    async def _poll_until_done(self, key: str, submitted: RunState) -> RunState:
        lane, api = self.lane, self.api
        state = submitted
        failures_in_a_row = auth_in_a_row = 0
        while state.phase not in ("completed", "failed"):
            schedule = self._schedule()
            if submitted.run_id is None and not submitted.ids:
                raise _Failed("parse", "malformed_body", "submit response carries no run id")
            await self._wait_or_deadline(schedule, "poll")
            self.polls += 1
            request = api.poll(lane.base_url, key, submitted)
            try:
                outcome = await self._call(lane._poll_channel, request, poll_stage(self.polls))
            except LaneAborted as aborted:
                auth_in_a_row += 1
                failures_in_a_row += 1  # recorded by _call; a transient refusal of one poll
                if (
                    aborted.payload.status_code not in TRANSIENT_POLL_AUTH_STATUSES
                    or auth_in_a_row > api.poll_auth_retries
                    or failures_in_a_row >= schedule.max_consecutive_failures
                ):
                    raise
                continue
            auth_in_a_row = 0
            if not outcome.completed:
                failures_in_a_row += 1
                if failures_in_a_row >= schedule.max_consecutive_failures:
                    raise _Failed(
                        "poll",
                        outcome.error_class or "http_status",
                        f"{failures_in_a_row} poll calls failed in a row; last: "
                        f"{_describe(outcome)}",
                    )
                continue
            failures_in_a_row = 0
            state = self._read(api.read_poll, outcome.body_json, "parse")
            self._observe(state)
        return state

    async def _fetch_result(self, key: str, submitted: RunState) -> Report:
        lane, api = self.lane, self.api
        request = api.result(lane.base_url, key, submitted)
        if request is None:
            raise _Failed("parse", "malformed_body", "completed run carries no report")
        n = 0
        while True:
            n += 1
            outcome = await self._call(lane._poll_channel, request, result_stage(n))
            if outcome.completed:
                return self._read(api.read_result, outcome.body_json, "parse")
            status = outcome.status_code
            if status in api.result_failed_statuses:
                raise _Failed("result", "vendor_failed", _describe(outcome))
            if status not in api.result_pending_statuses:
                raise _Failed("result", outcome.error_class or "http_status", _describe(outcome))
            await self._wait_or_deadline(self._schedule(), "result")
            self.polls += 1

    def _schedule(self) -> PollSchedule:
        schedule = self.lane.schedule
        if schedule is None:
            raise _Failed("parse", "malformed_body", "synchronous API answered with a pending run")
        return schedule

    async def _wait_or_deadline(self, schedule: PollSchedule, stage: str) -> None:
        remaining_s = schedule.deadline_s - (perf_counter() - self.started)
        if remaining_s < schedule.interval_s:
            raise _Failed(
                stage,
                "poll_deadline",
                f"run not finished after {schedule.deadline_s:g} s of polling "
                f"({self.polls} polls every {schedule.interval_s:g} s)",
            )
        await asyncio.sleep(schedule.interval_s)


def api_key_for(api: VendorApi, environ: Mapping[str, str]) -> str:
    """The first of the vendor's key variables that is set; MissingApiKey names the first."""
    for name in api.key_envs:
        if environ.get(name, "").strip():
            return api_key_from_env(name, environ)
    raise MissingApiKey(api.key_env)


def _describe(outcome: CallOutcome) -> str:
    payload = outcome.payload
    message = getattr(payload, "error_message", None) or f"HTTP {payload.status_code}"
    body = payload.raw_body
    if body and not outcome.completed:
        message = f"{message}: {body[:300]}"
    return message


def _policy_settings(policy: CallPolicy) -> dict[str, Any]:
    return {
        "max_attempts": policy.max_attempts,
        "backoff_base_s": policy.backoff_base_s,
        "backoff_cap_s": policy.backoff_cap_s,
        "budget_s": policy.budget_s,
        "attempt_timeout_s": policy.attempt_timeout_s,
    }


def shared_limiter(
    limiters: MutableMapping[str, AsyncLimiter] | None, group: str, rate_per_s: float
) -> AsyncLimiter | None:
    """The limiter of a rate group when the caller shares limiters across lanes (one vendor
    key, several tiers), else None (the lane gets its own)."""
    if limiters is None:
        return None
    if group not in limiters:
        limiters[group] = rate_limiter(rate_per_s)
    return limiters[group]
