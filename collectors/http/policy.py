"""How hard one provider call tries: attempts, backoff, timeouts, body cap, what is retryable.

Defaults follow providers.md §0: retry 408/425/429/5xx (529 included), timeouts and connection
errors; 400/422 are a landed rejection; 401/402/403 abort the lane. A lane widens the retryable
set, or the lane-abort set, only where the vendor documents it (Nimble search retries 409;
Tavily's 432/433 "plan / pay-as-you-go limit exceeded" abort the lane like a 402).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from email.utils import parsedate_to_datetime

RETRYABLE_STATUSES = frozenset({408, 425, 429} | set(range(500, 600)))
REJECTED_STATUSES = frozenset({400, 422})  # the provider refused this query: a landed non-answer
LANE_ABORT_STATUSES = frozenset({401, 402, 403})  # auth, billing, permission: stop the lane
LANE_ABORT_REASONS = {401: "key rejected", 402: "billing / credits exhausted", 403: "not permitted"}


@dataclass(frozen=True)
class CallPolicy:
    max_attempts: int = 3
    backoff_base_s: float = 0.5  # full jitter: sleep ~ U(0, min(cap, base * 2**(n-1)))
    backoff_cap_s: float = 5.0
    # No retry is started once the call has been going this long (backoff included).
    budget_s: float = 60.0
    # A Retry-After longer than this ends the call now instead of parking a worker on it.
    retry_after_cap_s: float = 60.0
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 30.0  # between two received chunks
    attempt_timeout_s: float = 60.0  # one whole HTTP attempt, body read included
    max_body_bytes: int = 16 * 1024 * 1024
    extra_retryable_statuses: frozenset[int] = field(default_factory=frozenset)
    # Vendor-specific statuses meaning "this key cannot go on" (quota, plan limit): status ->
    # the vendor's documented meaning, which goes into the failure message.
    extra_abort_statuses: tuple[tuple[int, str], ...] = ()
    # A 2xx whose body is not the JSON the vendor documents is usually a gateway hiccup (an HTML
    # error page served with 200, a body cut by a proxy): worth one more try, not a full budget.
    malformed_body_retries: int = 1

    def is_retryable_status(self, status: int) -> bool:
        return status in RETRYABLE_STATUSES or status in self.extra_retryable_statuses

    def abort_reason(self, status: int) -> str | None:
        """Why `status` stops the lane, or None when it does not."""
        if status in LANE_ABORT_STATUSES:
            return LANE_ABORT_REASONS[status]
        return dict(self.extra_abort_statuses).get(status)

    def with_overrides(self, **changes) -> CallPolicy:
        return replace(self, **changes)


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP-date; None if absent
    or unreadable (then ordinary backoff applies)."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)
