"""A lean loopback stand-in for the search vendors, for the run-time benchmark.

    python -m tests.fakes.fast_server [--latency-p50-ms 800 --latency-sigma 0.35]
                                             # prints `PORT <n>`, serves until killed

It answers like `FakeVendorServer` answers a healthy vendor (same prefixes, routes, auth check
and the same deterministic vendor-shaped bodies from `vendor_responses`), but on one asyncio
event loop with HTTP/1.1 keep-alive instead of a thread per connection, and with no faults and
no recording. Each response is held for a latency drawn from a log-normal distribution
(median `--latency-p50-ms`, shape `--latency-sigma`; seeded, so runs are comparable), which is
what a real vendor costs a run; holding it is a timer, not a thread, so the vendor stays cheap
on a 2-core machine. Responses on one connection keep their order. Tests that need faults use
`FakeVendorServer`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import random
import socket
import sys
from typing import Any

from tests.fakes.vendor_responses import (
    HEALTHCHECKS,
    SEARCH_ENDPOINTS,
    query_and_count,
    search_response,
)

_MAX_HEAD_BYTES = 64 * 1024
_REASONS = {200: b"OK", 400: b"Bad Request", 401: b"Unauthorized", 404: b"Not Found"}
_REASONS[405] = b"Method Not Allowed"
_REQUEST_IDS = itertools.count(1)


def answer(
    method: str, path: str, query: str, headers: dict[bytes, bytes], body: bytes
) -> tuple[int, Any]:
    """(status, JSON document) for one request: the routing of FakeVendorServer, no faults."""
    provider, _, vendor_path = path.lstrip("/").partition("/")
    if provider not in SEARCH_ENDPOINTS:
        return 404, {"error": "unknown vendor prefix"}
    vendor_path = "/" + vendor_path
    if vendor_path == HEALTHCHECKS.get(provider):
        return 200, {"status": "ok"}
    search_method, search_path, auth_header, auth_prefix = SEARCH_ENDPOINTS[provider]
    if vendor_path != search_path:
        return 404, {"error": f"no route {vendor_path}"}
    if method != search_method:
        return 405, {"error": f"{provider} search takes {search_method}"}
    presented = headers.get(auth_header.encode(), b"").decode("latin-1")
    if not presented.startswith(auth_prefix) or not presented[len(auth_prefix) :]:
        return 401, {"error": "invalid API key"}
    text, count = query_and_count(provider, body, query)
    return 200, search_response(provider, text, count)


def _response(status: int, document: Any) -> bytes:
    body = json.dumps(document).encode()
    head = (
        b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
        b"X-Request-Id: fast-%d\r\n\r\n"
        % (status, _REASONS.get(status, b"Status"), len(body), next(_REQUEST_IDS))
    )
    return head + body


class Latency:
    """Seeded log-normal response latency; `p50_s=0` answers at once."""

    def __init__(self, p50_s: float = 0.0, sigma: float = 0.35, seed: int = 20261201):
        self.p50_s = p50_s
        self.sigma = sigma
        self._random = random.Random(seed)

    def draw(self) -> float:
        if self.p50_s <= 0:
            return 0.0
        return self.p50_s * self._random.lognormvariate(0.0, self.sigma)


class _VendorProtocol(asyncio.Protocol):
    def __init__(self, latency: Latency | None = None) -> None:
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None
        self._latency = latency or Latency()
        self._last_due = 0.0  # responses on one connection leave in request order

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        while self._transport is not None and self._serve_one():
            pass

    def _serve_one(self) -> bool:
        buffer = self._buffer
        head_end = buffer.find(b"\r\n\r\n")
        if head_end < 0:
            if len(buffer) > _MAX_HEAD_BYTES:
                self._fail(400)
            return False
        lines = bytes(buffer[:head_end]).split(b"\r\n")
        try:
            method, target, _version = lines[0].decode("latin-1").split(" ")
        except ValueError:
            return self._fail(400)
        headers: dict[bytes, bytes] = {}
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon:
                return self._fail(400)
            headers[name.strip().lower()] = value.strip()
        length = headers.get(b"content-length", b"0")
        if not length.isdigit() or b"transfer-encoding" in headers:
            return self._fail(400)  # our clients send bodies with a Content-Length
        end = head_end + 4 + int(length)
        if len(buffer) < end:
            return False
        body = bytes(buffer[head_end + 4 : end])
        del buffer[:end]
        path, _, query = target.partition("?")
        response = _response(*answer(method, path, query, headers, body))
        close = headers.get(b"connection", b"").lower() == b"close"
        delay = self._latency.draw()
        if delay <= 0 and self._last_due == 0.0:
            self._send(response, close)
        else:
            loop = asyncio.get_running_loop()
            due = max(loop.time() + delay, self._last_due)
            self._last_due = due
            loop.call_at(due, self._send, response, close)
        return not close

    def _send(self, response: bytes, close: bool) -> None:
        if self._transport is None or self._transport.is_closing():
            return
        self._transport.write(response)
        if close:
            self._transport.close()
            self._transport = None

    def _fail(self, status: int) -> bool:
        self._transport.write(_response(status, {"error": "bad request"}))
        self._transport.close()
        self._transport = None
        return False


async def serve(port: int = 0, *, ready=None, latency: Latency | None = None) -> None:
    loop = asyncio.get_running_loop()
    shared = latency or Latency()
    server = await loop.create_server(
        lambda: _VendorProtocol(shared), "127.0.0.1", port, backlog=1024, family=socket.AF_INET
    )
    bound = server.sockets[0].getsockname()[1]
    if ready is not None:
        ready(bound)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-p50-ms", type=float, default=0.0)
    parser.add_argument("--latency-sigma", type=float, default=0.35)
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args(argv)
    latency = Latency(args.latency_p50_ms / 1000, args.latency_sigma, args.seed)
    ready = lambda port: print(f"PORT {port}", flush=True)  # noqa: E731
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port, ready=ready, latency=latency))
    return 0


if __name__ == "__main__":
    sys.exit(main())
