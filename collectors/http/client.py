"""httpx clients for provider calls.

A lane gets one `ProviderClient` per concurrency slot, each holding a single keep-alive
connection: a granted request then never waits for a pooled connection inside the timed round
trip. Two things keep the client CPU per call low (benchmarks/harness.py, docs/benchmarks.md):

* the wire layer is `KeepAliveTransport` (HTTP/1.1 on an asyncio protocol) instead of httpcore;
* `ProviderClient.send_once` hands the request straight to the transport httpx would pick
  (proxy mounts and respx's httpx-level mock included), skipping the auth-flow, redirect,
  cookie-jar and event-hook layers of `AsyncClient.send`, none of which an API call uses.

`transport="httpcore"` builds plain httpx clients on httpx's default transport instead.
"""

from __future__ import annotations

import ssl
from functools import cache
from typing import Literal

import httpx

from collectors.http.transport import KeepAliveTransport

Wire = Literal["keepalive", "httpcore"]


@cache
def _tls_context() -> ssl.SSLContext:
    # Building a default context costs ~0.1 s here; every client shares one. HTTP/1.1 only.
    context = httpx.create_ssl_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


class ProviderClient(httpx.AsyncClient):
    """An `httpx.AsyncClient` for vendor API calls: no auth, no redirects followed, no cookies
    kept between calls (each call stands alone, as the log records it)."""

    def __init__(self, *, transport: httpx.AsyncBaseTransport):
        super().__init__(transport=transport, follow_redirects=False)

    async def send_once(self, request: httpx.Request) -> httpx.Response:
        """`send(request, stream=True)` for a client with no auth, hooks or cookie jar: the
        response streams from the transport; read or `aclose()` it."""
        transport = self._transport_for_url(request.url)
        response = await transport.handle_async_request(request)
        response.request = request
        return response

    async def send(self, request: httpx.Request, **kwargs) -> httpx.Response:
        response = await super().send(request, **kwargs)
        self.cookies.clear()  # stateless, like send_once
        return response


def new_async_client(
    *, max_connections: int = 1, transport: Wire = "keepalive"
) -> httpx.AsyncClient:
    # Redirects are not followed: a vendor redirecting an API call is a status worth recording,
    # not something to chase with the key attached. Timeouts are set per request by Channel.
    if transport == "httpcore":
        limits = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        )
        return httpx.AsyncClient(verify=_tls_context(), follow_redirects=False, limits=limits)
    return ProviderClient(
        transport=KeepAliveTransport(ssl_context=_tls_context(), max_connections=max_connections)
    )


def slot_clients(
    concurrency: int, *, transport: Wire = "keepalive"
) -> tuple[httpx.AsyncClient, ...]:
    """One single-connection client per concurrency slot (see the module docstring)."""
    return tuple(
        new_async_client(max_connections=1, transport=transport) for _ in range(concurrency)
    )
