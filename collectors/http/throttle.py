"""Client-side pacing for one lane: a rate limit (aiolimiter) plus a concurrency cap.

The semaphore is taken first and the rate token second, so a granted token is spent at once by
a request that is ready to go (taking them the other way round lets tokens expire in a queue and
bursts exceed the rate). Lanes whose vendor limits the key, not the product, share one
`AsyncLimiter` and keep their own semaphores.

Each grant also carries a slot number in [0, concurrency): `Channel` gives every slot its own
keep-alive connection, so a granted request never queues for a pooled connection inside the
timed round trip.
"""

from __future__ import annotations

import asyncio
from time import perf_counter

from aiolimiter import AsyncLimiter


def rate_limiter(rate_per_s: float) -> AsyncLimiter:
    """A limiter admitting `rate_per_s` requests per second, also for rates below one per second
    (one request per 1/rate seconds) where `AsyncLimiter(rate, 1)` would round to nothing."""
    if rate_per_s <= 0:
        raise ValueError(f"rate_per_s must be positive, got {rate_per_s}")
    if rate_per_s >= 1:
        return AsyncLimiter(rate_per_s, 1.0)
    return AsyncLimiter(1, 1.0 / rate_per_s)


class Throttle:
    def __init__(self, rate_per_s: float, concurrency: int, *, limiter: AsyncLimiter | None = None):
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.rate_per_s = rate_per_s
        self.concurrency = concurrency
        self._limiter = limiter if limiter is not None else rate_limiter(rate_per_s)
        self._semaphore = asyncio.Semaphore(concurrency)
        # LIFO: the most recently used slot (the warmest connection) goes out first.
        self._free_slots = list(range(concurrency - 1, -1, -1))

    def slot(self) -> Grant:
        """`async with throttle.slot() as grant:` holds one request's grant."""
        return Grant(self)


class Grant:
    __slots__ = ("_throttle", "slot", "waited_s")

    def __init__(self, throttle: Throttle):
        self._throttle = throttle
        self.slot = -1
        self.waited_s = 0.0

    async def __aenter__(self) -> Grant:
        throttle = self._throttle
        started = perf_counter()
        await throttle._semaphore.acquire()
        self.slot = throttle._free_slots.pop()
        try:
            await throttle._limiter.acquire()
        except BaseException:
            self._release()
            raise
        self.waited_s = perf_counter() - started
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        self._throttle._free_slots.append(self.slot)
        self._throttle._semaphore.release()
