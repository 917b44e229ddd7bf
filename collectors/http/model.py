"""What goes into a provider call and what comes out of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from warehouse.events import CallTimings, ProviderCallCompleted, ProviderCallFailed


class ErrorClass:
    """`ProviderCallFailed.error_class` values, and whether the provider answered (`landed`)."""

    TIMEOUT = "timeout"  # no complete response within the attempt deadline
    CONNECTION = "connection"  # refused, reset or closed before a status line arrived
    TRUNCATED_BODY = "truncated_body"  # status arrived, the body was cut (reset, short read)
    HTTP_STATUS = "http_status"  # a retryable status (5xx, 408, 425, lane-listed) outlived retries
    RATE_LIMITED = "rate_limited"  # 429 outlived retries
    MALFORMED_BODY = "malformed_body"  # 2xx whose body is not JSON
    VENDOR_FAILED = "vendor_failed"  # 2xx whose body says the call failed (`success: false`)
    BODY_TOO_LARGE = "body_too_large"  # larger than CallPolicy.max_body_bytes; reading stopped
    REJECTED = "rejected"  # 400/422: the provider refused this query (landed non-answer)
    CLIENT_ERROR = "client_error"  # any other non-retryable status (404, 413, 3xx...): landed
    # 401/402/403, or a lane's documented quota status (Tavily 432/433): raises LaneAborted.
    AUTH = "auth"

    # The provider deliberately answered this request; everything else is a failure to get a
    # usable response (counted as `failed`, methodology §2.3).
    LANDED = frozenset({REJECTED, CLIENT_ERROR, AUTH})


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """A request as a lane builds it, key included. Only `collectors.http` ever sees it whole:
    it is redacted into a `RecordedRequest` before anything is stored."""

    method: str
    url: str
    headers: Mapping[str, str]
    params: Mapping[str, str | int | float | bool] | None = None
    json_body: Any = None


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """One provider call, finished: the event payload to append, plus the parsed JSON body of a
    completed call (not stored; the payload's `raw_body` is the record)."""

    payload: ProviderCallCompleted | ProviderCallFailed
    body_json: Any = None

    @property
    def completed(self) -> bool:
        return isinstance(self.payload, ProviderCallCompleted)

    @property
    def status_code(self) -> int | None:
        return self.payload.status_code

    @property
    def raw_body(self) -> str | None:
        return self.payload.raw_body

    @property
    def response_headers(self) -> dict[str, str]:
        return self.payload.response_headers if self.completed else {}

    @property
    def vendor_request_id(self) -> str | None:
        return self.payload.vendor_request_id if self.completed else None

    @property
    def timings(self) -> CallTimings:
        return self.payload.timings

    @property
    def http_attempts(self) -> int:
        return self.payload.http_attempts

    @property
    def error_class(self) -> str | None:
        return None if self.completed else self.payload.error_class

    @property
    def landed(self) -> bool:
        return self.completed or self.payload.landed


class LaneAborted(Exception):
    """401/402/403 (or a lane's quota status): the key is wrong, out of credit or not allowed.
    The runner appends `outcome.payload` (a ProviderCallFailed, error_class "auth", its message
    naming the reason) and stops the lane."""

    def __init__(self, outcome: CallOutcome):
        self.outcome = outcome
        payload = outcome.payload
        super().__init__(
            f"lane {payload.lane!r} aborted on item {payload.item_id!r}: {payload.error_message}"
        )

    @property
    def payload(self) -> ProviderCallFailed:
        return self.outcome.payload
