"""httpx clients for provider calls.

A lane gets one `AsyncClient` per concurrency slot, each holding a single keep-alive
connection: a granted request then never waits for a pooled connection inside the timed round
trip, and httpcore's pool bookkeeping (linear in pool size, per request) stays constant. Measured
on the 2-core dev VM at 64 in flight: ~2.5x the throughput of one 64-connection pool.
"""

from __future__ import annotations

import ssl
from functools import cache

import httpx


@cache
def _tls_context() -> ssl.SSLContext:
    # Building a default context costs ~0.1 s here; every client shares one.
    return httpx.create_ssl_context()


def new_async_client(*, max_connections: int = 1) -> httpx.AsyncClient:
    # Redirects are not followed: a vendor redirecting an API call is a status worth recording,
    # not something to chase with the key attached. Timeouts are set per request by Channel.
    return httpx.AsyncClient(
        verify=_tls_context(),
        follow_redirects=False,
        limits=httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        ),
    )


def slot_clients(concurrency: int) -> tuple[httpx.AsyncClient, ...]:
    """One single-connection client per concurrency slot (see the module docstring)."""
    return tuple(new_async_client(max_connections=1) for _ in range(concurrency))
