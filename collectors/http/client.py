"""httpx clients for provider calls: stock httpx on httpcore, HTTP/1.1, certificates verified.

A lane gets one `AsyncClient` per concurrency slot, each holding a single keep-alive
connection: a granted request then never waits for a pooled connection inside the timed round
trip, so `round_trip_ms` is the vendor's time, not our pool's. No vendor's rate limit (1-10
requests/s per lane) needs more from the client than this (benchmarks/harness.py). Clients keep
no cookies (`refusing_cookie_jar`): nothing a vendor sets rides along on a later call.
"""

from __future__ import annotations

import ssl
from functools import cache
from http.cookiejar import CookieJar, DefaultCookiePolicy

import httpx


@cache
def shared_tls_context() -> ssl.SSLContext:
    """The certificate-verifying context of every client of the process: provider calls and
    the live-URL fetcher. Building one costs ~0.1 s here, and loading the CA file (the GIL
    released while OpenSSL fills its store) is where a test run once segfaulted, with loopback
    server threads running beside it (cause not established); once per process is enough."""
    return httpx.create_ssl_context()


def refusing_cookie_jar() -> CookieJar:
    """A jar that stores no cookie: a stock httpx client keeps every Set-Cookie and sends it on
    later calls (a vendor's session or load-balancer pin would then shape our next requests,
    and a cookie is a credential we never meant to hold). No domain is allowed, so none sticks."""
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


def new_async_client(*, max_connections: int = 1) -> httpx.AsyncClient:
    # Redirects are not followed: a vendor redirecting an API call is a status worth recording,
    # not something to chase with the key attached. Timeouts are set per request by Channel.
    return httpx.AsyncClient(
        verify=shared_tls_context(),
        follow_redirects=False,
        cookies=refusing_cookie_jar(),
        limits=httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        ),
    )


def slot_clients(concurrency: int) -> tuple[httpx.AsyncClient, ...]:
    """One single-connection client per concurrency slot (see the module docstring)."""
    return tuple(new_async_client(max_connections=1) for _ in range(concurrency))
