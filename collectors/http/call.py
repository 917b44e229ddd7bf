"""One provider call: throttle, bounded retries, timed attempts, and exactly one event payload.

    outcome = await call_provider(channel, request, stage="search", item_id=..., attempt=1)

returns a `CallOutcome` whose payload is a ProviderCallCompleted (2xx with a readable body) or a
ProviderCallFailed, and raises `LaneAborted` (payload attached) on 401/402/403. Exceptions that
are not transport or HTTP failures (bugs, cancellation) propagate with no payload, so the unit
stays pending and a resumed run does it again.

Clocks (methodology §2.5): `queue_wait_ms` sums the waits for the throttle over all attempts;
`round_trip_ms` is the last attempt, from the grant to the end of the body read; `whole_call_ms`
includes backoff sleeps.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    stop_after_attempt,
    stop_before_delay,
    wait_random_exponential,
)
from tenacity.stop import stop_base
from tenacity.wait import wait_base

from collectors.http.model import CallOutcome, ErrorClass, LaneAborted, ProviderRequest
from collectors.http.policy import (
    REJECTED_STATUSES,
    CallPolicy,
    parse_retry_after,
)
from collectors.http.redaction import Redactor
from collectors.http.throttle import Throttle
from warehouse.events import (
    CallTimings,
    ProviderCallCompleted,
    ProviderCallFailed,
    RecordedRequest,
)

logger = logging.getLogger("collectors.http")

KEPT_HEADERS = frozenset(
    {
        "content-type",
        "content-length",
        "content-encoding",
        "date",
        "retry-after",
        "server-timing",
        "x-request-id",
        "request-id",
    }
)
KEPT_HEADER_PREFIXES = ("x-ratelimit-", "ratelimit", "x-rate-limit-")

RequestIdReader = Callable[[Mapping[str, str], Any], str | None]


def request_id_from_headers(headers: Mapping[str, str], _body: Any) -> str | None:
    return headers.get("x-request-id") or headers.get("request-id")


@dataclass(frozen=True)
class Channel:
    """Everything a lane's calls share; built once per lane per run."""

    lane: str
    provider: str
    # One client per throttle slot (see collectors.http.client), or one shared client.
    clients: tuple[httpx.AsyncClient, ...]
    throttle: Throttle
    policy: CallPolicy
    redactor: Redactor
    vendor_request_id: RequestIdReader = request_id_from_headers
    kept_headers: frozenset[str] = KEPT_HEADERS
    expects_json: bool = True
    # A lane's check of a parsed 2xx body: None when it is a result, else why it is a failure.
    body_failure: Callable[[Any], str | None] | None = None
    timeout: httpx.Timeout = field(init=False)

    @property
    def client(self) -> httpx.AsyncClient:
        return self.clients[0]

    def __post_init__(self) -> None:
        if not self.clients:
            raise ValueError("a Channel needs at least one httpx.AsyncClient")
        p = self.policy
        timeout = httpx.Timeout(p.read_timeout_s, connect=p.connect_timeout_s)
        object.__setattr__(self, "timeout", timeout)


async def call_provider(
    channel: Channel, request: ProviderRequest, *, stage: str, item_id: str, attempt: int
) -> CallOutcome:
    started = perf_counter()
    state = _CallState()
    http_request = channel.client.build_request(
        request.method,
        request.url,
        params=request.params,
        headers=request.headers,
        json=request.json_body,
        timeout=channel.timeout,
    )
    recorded = channel.redactor.request(
        http_request.method, str(http_request.url), http_request.headers, request.json_body
    )
    try:
        async for http_try in _retrying(channel, state, item_id):
            with http_try:
                received = await _attempt(channel, http_request, state)
    except _AttemptFailed as failure:
        outcome = _failed(channel, failure, state, started, recorded, stage, item_id, attempt)
        if failure.error_class == ErrorClass.AUTH:
            raise LaneAborted(outcome) from None
        return outcome
    return _completed(channel, received, state, started, recorded, stage, item_id, attempt)


# --- one HTTP attempt ------------------------------------------------------------------------


@dataclass(slots=True)
class _CallState:
    queue_wait_s: float = 0.0
    round_trip_s: float | None = None
    http_attempts: int = 0
    malformed_bodies: int = 0


@dataclass(frozen=True, slots=True)
class _Received:
    status: int
    headers: httpx.Headers
    text: str
    body_json: Any


class _AttemptFailed(Exception):
    def __init__(
        self,
        error_class: str,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        body: str | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        self.retryable = retryable
        self.status = status
        self.body = body
        self.retry_after = retry_after


class _BodyTooLarge(Exception):
    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


async def _attempt(channel: Channel, http_request: httpx.Request, state: _CallState) -> _Received:
    policy = channel.policy
    state.http_attempts += 1
    async with channel.throttle.slot() as grant:
        state.queue_wait_s += grant.waited_s
        client = channel.clients[grant.slot % len(channel.clients)]
        sent = perf_counter()
        try:
            async with asyncio.timeout(policy.attempt_timeout_s):
                response, body = await _exchange(client, http_request, policy)
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise _AttemptFailed(
                ErrorClass.TIMEOUT, _describe(channel, exc), retryable=True
            ) from None
        except _BodyTooLarge as exc:
            raise _AttemptFailed(
                ErrorClass.BODY_TOO_LARGE, str(exc), retryable=False, status=exc.status
            ) from None
        except _BodyCut as exc:
            raise _AttemptFailed(
                ErrorClass.TRUNCATED_BODY,
                _describe(channel, exc.cause),
                retryable=True,
                status=exc.status,
            ) from None
        except httpx.TransportError as exc:
            raise _AttemptFailed(
                ErrorClass.CONNECTION, _describe(channel, exc), retryable=True
            ) from None
        finally:
            state.round_trip_s = perf_counter() - sent
    # Decoding and JSON parsing happen after the slot is released: not the provider's time.
    return _classify(channel, response, body, state)


class _BodyCut(Exception):
    def __init__(self, status: int, cause: Exception):
        super().__init__(status)
        self.status = status
        self.cause = cause


async def _exchange(
    client: httpx.AsyncClient, http_request: httpx.Request, policy: CallPolicy
) -> tuple[httpx.Response, bytes]:
    """Send and read the body, stopping at `max_body_bytes` instead of buffering a flood."""
    response = await client.send(http_request, stream=True)
    try:
        limit = policy.max_body_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise _BodyTooLarge(
                f"Content-Length {declared} exceeds max_body_bytes={limit}; not read",
                response.status_code,
            )
        body = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > limit:
                    raise _BodyTooLarge(
                        f"body exceeded max_body_bytes={limit}; reading stopped",
                        response.status_code,
                    )
        except (httpx.ReadError, httpx.RemoteProtocolError) as exc:
            raise _BodyCut(response.status_code, exc) from None
        return response, bytes(body)
    finally:
        await response.aclose()


def _classify(
    channel: Channel, response: httpx.Response, body: bytes, state: _CallState
) -> _Received:
    status = response.status_code
    text = _decode(body, response.charset_encoding)
    if 200 <= status < 300:
        if not channel.expects_json:
            return _Received(status, response.headers, text, None)
        try:
            document = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python's stack
            state.malformed_bodies += 1
            raise _AttemptFailed(
                ErrorClass.MALFORMED_BODY,
                f"HTTP {status} body is not valid JSON ({len(body)} bytes)",
                retryable=True,
                status=status,
                body=text,
            ) from None
        failure = channel.body_failure(document) if channel.body_failure else None
        if failure is not None:
            # A 2xx the vendor itself marks as failed (Firecrawl `success: false`): retried like
            # a 5xx, and a failure (not landed) when it persists.
            raise _AttemptFailed(
                ErrorClass.VENDOR_FAILED,
                channel.redactor.text(f"HTTP {status} reports failure: {failure}"),
                retryable=True,
                status=status,
                body=text,
            )
        return _Received(status, response.headers, text, document)
    abort_reason = channel.policy.abort_reason(status)
    if abort_reason is not None:
        raise _AttemptFailed(
            ErrorClass.AUTH,
            f"HTTP {status} ({abort_reason})",
            retryable=False,
            status=status,
            body=text,
        )
    if status in REJECTED_STATUSES:
        error_class, retryable = ErrorClass.REJECTED, False
    elif channel.policy.is_retryable_status(status):
        error_class = ErrorClass.RATE_LIMITED if status == 429 else ErrorClass.HTTP_STATUS
        retryable = True
    else:
        error_class, retryable = ErrorClass.CLIENT_ERROR, False
    raise _AttemptFailed(
        error_class,
        f"HTTP {status}",
        retryable=retryable,
        status=status,
        body=text,
        retry_after=parse_retry_after(response.headers.get("retry-after")),
    )


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # an unknown charset name
        return body.decode("utf-8", errors="replace")


def _describe(channel: Channel, exc: BaseException) -> str:
    detail = str(exc).strip()
    return channel.redactor.text(
        f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    )


# --- retry wiring (tenacity) -----------------------------------------------------------------


class _WaitRetryAfterOrJitter(wait_base):
    """The server's Retry-After when it sent one, else full-jitter exponential backoff."""

    def __init__(self, base_s: float, cap_s: float):
        self._jitter = wait_random_exponential(multiplier=base_s, max=cap_s)

    def __call__(self, retry_state: RetryCallState) -> float:
        failure = retry_state.outcome.exception()
        if isinstance(failure, _AttemptFailed) and failure.retry_after is not None:
            return failure.retry_after
        return self._jitter(retry_state)


class _StopIfRetryAfterBeyond(stop_base):
    def __init__(self, cap_s: float):
        self.cap_s = cap_s

    def __call__(self, retry_state: RetryCallState) -> bool:
        failure = retry_state.outcome.exception()
        return (
            isinstance(failure, _AttemptFailed)
            and failure.retry_after is not None
            and failure.retry_after > self.cap_s
        )


def _retrying(channel: Channel, state: _CallState, item_id: str) -> AsyncRetrying:
    policy = channel.policy

    def should_retry(retry_state: RetryCallState) -> bool:
        failure = retry_state.outcome.exception()
        if not isinstance(failure, _AttemptFailed) or not failure.retryable:
            return False
        if failure.error_class == ErrorClass.MALFORMED_BODY:
            return state.malformed_bodies <= policy.malformed_body_retries
        return True

    def log_retry(retry_state: RetryCallState) -> None:
        failure = retry_state.outcome.exception()
        logger.info(
            "%s %s: HTTP attempt %d failed (%s: %s); retrying in %.2fs",
            channel.lane,
            item_id,
            retry_state.attempt_number,
            failure.error_class,
            failure.message,
            retry_state.upcoming_sleep,
        )

    return AsyncRetrying(
        stop=(
            stop_after_attempt(policy.max_attempts)
            | stop_before_delay(policy.budget_s)
            | _StopIfRetryAfterBeyond(policy.retry_after_cap_s)
        ),
        wait=_WaitRetryAfterOrJitter(policy.backoff_base_s, policy.backoff_cap_s),
        retry=should_retry,
        before_sleep=log_retry,
        reraise=True,
    )


# --- payloads --------------------------------------------------------------------------------


def _timings(state: _CallState, started: float) -> CallTimings:
    return CallTimings(
        queue_wait_ms=state.queue_wait_s * 1000.0,
        round_trip_ms=None if state.round_trip_s is None else state.round_trip_s * 1000.0,
        whole_call_ms=(perf_counter() - started) * 1000.0,
    )


def _call_fields(
    channel: Channel,
    state: _CallState,
    started: float,
    recorded: RecordedRequest,
    stage: str,
    item_id: str,
    attempt: int,
) -> dict[str, Any]:
    """What every provider_call_* event says, landed or not: which call (as sent), its clocks
    and the limits it ran under."""
    return {
        "lane": channel.lane,
        "provider": channel.provider,
        "stage": stage,
        "item_id": item_id,
        "attempt": attempt,
        "request": recorded,
        "timings": _timings(state, started),
        "http_attempts": state.http_attempts,
        "concurrency": channel.throttle.concurrency,
        "rate_per_s": channel.throttle.rate_per_s,
    }


def _kept_headers(channel: Channel, headers: httpx.Headers) -> dict[str, str]:
    kept = channel.kept_headers
    selected = [
        (name, value)
        for name, value in headers.items()
        if name in kept or name.startswith(KEPT_HEADER_PREFIXES)
    ]
    return channel.redactor.headers(selected)


def _completed(
    channel: Channel,
    received: _Received,
    state: _CallState,
    started: float,
    recorded: RecordedRequest,
    stage: str,
    item_id: str,
    attempt: int,
) -> CallOutcome:
    raw_body = channel.redactor.text(received.text)
    body_json = received.body_json
    if raw_body is not received.text and body_json is not None:
        # The vendor echoed a secret: later stages must see exactly what the log keeps.
        body_json = channel.redactor.value(body_json)
    headers = _kept_headers(channel, received.headers)
    request_id = channel.vendor_request_id(headers, body_json)
    payload = ProviderCallCompleted(
        **_call_fields(channel, state, started, recorded, stage, item_id, attempt),
        status_code=received.status,
        response_headers=headers,
        raw_body=raw_body,
        vendor_request_id=None if request_id is None else channel.redactor.text(str(request_id)),
    )
    return CallOutcome(payload=payload, body_json=body_json)


def _failed(
    channel: Channel,
    failure: _AttemptFailed,
    state: _CallState,
    started: float,
    recorded: RecordedRequest,
    stage: str,
    item_id: str,
    attempt: int,
) -> CallOutcome:
    message = failure.message
    if failure.retryable:
        message += f" (gave up after {state.http_attempts} HTTP attempt(s)"
        if (
            failure.retry_after is not None
            and failure.retry_after > channel.policy.retry_after_cap_s
        ):
            message += f"; Retry-After {failure.retry_after:.0f}s exceeds the cap"
        message += ")"
    payload = ProviderCallFailed(
        **_call_fields(channel, state, started, recorded, stage, item_id, attempt),
        error_class=failure.error_class,
        error_message=channel.redactor.text(message),
        status_code=failure.status,
        landed=failure.error_class in ErrorClass.LANDED,
        raw_body=None if failure.body is None else channel.redactor.text(failure.body),
    )
    return CallOutcome(payload=payload)
