"""The one result of a vendor call, whatever the vendor sells (issue #10's provider protocol):

    result = await search.search("exa_search_auto", question, item_id=...)   # search lanes
    result = await answer_lane.call(question, item_id=..., attempt=1)       # answer lanes
    result.payload      # the event payload to append (ProviderCallCompleted | ProviderCallFailed)
    result.value        # the normalised result: chunks, a vendor answer, ...; None unless completed
    result.request      # the raw request as stored (redacted)
    result.raw_response # the raw response body as stored
    result.timings      # queue wait, round trip, whole call (collectors.http.call)
    result.cost_usd     # a completed call at the lane's list price (None: no list price)

A result is built from a fresh `CallOutcome` or, on resume, from a stored payload
(`from_payload`): normalising always starts from what the log holds, so a re-normalisation of
old calls and a live call give the same value.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from collectors.http.model import CallOutcome
from warehouse.events import CallTimings, ProviderCallCompleted, ProviderCallFailed, RecordedRequest

T = TypeVar("T")


@dataclass(frozen=True)
class CallResult(Generic[T]):
    lane: str
    outcome: CallOutcome
    value: T | None  # what the lane's normaliser made of a completed call
    normalizer_version: str | None
    price_usd_per_1k: float | None  # the lane's list price per 1,000 calls

    @classmethod
    def of(
        cls,
        outcome: CallOutcome,
        normalize: Callable[[Any], T],
        *,
        normalizer_version: str | None,
        price_usd_per_1k: float | None,
    ) -> CallResult[T]:
        """Normalise a completed call's parsed body (`normalize(body_json)`); a failed call has
        no value."""
        value = normalize(outcome.body_json) if outcome.completed else None
        return cls(
            lane=outcome.payload.lane,
            outcome=outcome,
            value=value,
            normalizer_version=normalizer_version,
            price_usd_per_1k=price_usd_per_1k,
        )

    @classmethod
    def from_payload(
        cls,
        payload: ProviderCallCompleted | ProviderCallFailed,
        normalize: Callable[[Any], T],
        *,
        normalizer_version: str | None,
        price_usd_per_1k: float | None,
    ) -> CallResult[T]:
        """The result of a stored call: its raw body parsed again and normalised now. A stored
        body that is not JSON normalises as None (the lane's normaliser decides what that is)."""
        body = None
        if isinstance(payload, ProviderCallCompleted):
            try:
                body = json.loads(payload.raw_body)
            except ValueError:
                body = None
        return cls.of(
            CallOutcome(payload, body),
            normalize,
            normalizer_version=normalizer_version,
            price_usd_per_1k=price_usd_per_1k,
        )

    @property
    def completed(self) -> bool:
        return self.outcome.completed

    @property
    def payload(self) -> ProviderCallCompleted | ProviderCallFailed:
        return self.outcome.payload

    @property
    def request(self) -> RecordedRequest:
        return self.payload.request

    @property
    def raw_response(self) -> str | None:
        return self.payload.raw_body

    @property
    def timings(self) -> CallTimings:
        return self.payload.timings

    @property
    def cost_usd(self) -> float | None:
        """One completed call at the lane's list price; None when the lane has no list price or
        the call failed (whether a vendor bills a failed call is not on its price list)."""
        if self.price_usd_per_1k is None or not self.completed:
            return None
        return self.price_usd_per_1k / 1000
