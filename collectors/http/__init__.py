"""The one async HTTP layer every provider client uses: throttle, retries, timings, redaction,
and the ProviderCallCompleted / ProviderCallFailed payload of each call, returned with its
normalised value as one `CallResult`."""

from collectors.http.call import (
    KEPT_HEADERS,
    Channel,
    RequestIdReader,
    call_provider,
    request_id_from_headers,
)
from collectors.http.client import new_async_client, slot_clients
from collectors.http.event_sink import EventSink
from collectors.http.keys import MissingApiKey, api_key_from_env
from collectors.http.model import CallOutcome, ErrorClass, LaneAborted, ProviderRequest
from collectors.http.policy import (
    LANE_ABORT_STATUSES,
    REJECTED_STATUSES,
    RETRYABLE_STATUSES,
    CallPolicy,
    parse_retry_after,
)
from collectors.http.redaction import REDACTED, Redactor, redact
from collectors.http.result import CallResult
from collectors.http.throttle import Grant, Throttle, rate_limiter

__all__ = [
    "KEPT_HEADERS",
    "LANE_ABORT_STATUSES",
    "REDACTED",
    "REJECTED_STATUSES",
    "RETRYABLE_STATUSES",
    "CallOutcome",
    "CallPolicy",
    "CallResult",
    "Channel",
    "ErrorClass",
    "EventSink",
    "Grant",
    "LaneAborted",
    "MissingApiKey",
    "ProviderRequest",
    "Redactor",
    "RequestIdReader",
    "Throttle",
    "api_key_from_env",
    "call_provider",
    "new_async_client",
    "parse_retry_after",
    "rate_limiter",
    "redact",
    "request_id_from_headers",
    "slot_clients",
]
