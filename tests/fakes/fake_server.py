"""A loopback fake of the six search vendors, with faults on demand.

    with FakeVendorServer() as fake:
        fake.add_faults("exa", Fault.status(429, retry_after="1"), None, Fault.reset())
        SearchClient(..., base_urls=fake.base_urls())

Each vendor lives under its own prefix (`/exa/search`, `/brave/res/v1/web/search`, ...), so
one server on 127.0.0.1:<free port> stands in for every search lane. Faults are queued per target
(a provider name, an exact path, or "*") and consumed one per request, in order; `None` in the
queue means "answer normally", so `add_faults("exa", None, None, Fault.status(500))` fails the
third request. `set_fault` makes a fault permanent. Every request is recorded (method, path,
query, headers, body) so tests can check what was sent, key header included.

Run standalone (for benchmarks/harness.py): `python -m tests.fakes.fake_server` prints
`PORT <n>` and serves until killed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import socket
import ssl
import struct
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from tests.fakes.vendor_responses import (
    HEALTHCHECKS,
    SEARCH_ENDPOINTS,
    query_and_count,
    search_response,
)

_REQUEST_IDS = itertools.count(1)
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    402: "Payment Required",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    422: "Unprocessable Entity",
    425: "Too Early",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    529: "Overloaded",
}


@dataclass(frozen=True)
class Fault:
    kind: str
    code: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    delay_s: float = 0.0
    size_bytes: int = 0
    declare_length: bool = True

    @classmethod
    def status_code(
        cls, status: int, *, retry_after: str | None = None, body: bytes | None = None
    ) -> Fault:
        headers = (("Retry-After", retry_after),) if retry_after is not None else ()
        if body is None:
            body = json.dumps({"error": _REASONS.get(status, "error"), "status": status}).encode()
        return cls("status", code=status, headers=headers, body=body)

    status = status_code  # Fault.status(429, retry_after="1") reads best at call sites

    @classmethod
    def slow(cls, delay_s: float) -> Fault:
        """Answer normally, after `delay_s` (client timeouts)."""
        return cls("slow", delay_s=delay_s)

    @classmethod
    def reset(cls, *, mid_body: bool = False) -> Fault:
        """Abort the connection (TCP RST): before any byte, or after half of the body."""
        return cls("reset_mid_body" if mid_body else "reset")

    @classmethod
    def malformed_json(cls, body: bytes = b"<html><body>502 Bad Gateway</body></html>") -> Fault:
        """A complete 200 response whose body is not JSON."""
        return cls("malformed", body=body)

    @classmethod
    def truncated_json(cls) -> Fault:
        """Content-Length promises more than is sent, then the server closes."""
        return cls("truncated")

    @classmethod
    def huge_body(cls, size_bytes: int, *, declare_length: bool = True) -> Fault:
        """A 200 of `size_bytes`; without a declared length it is sent chunked."""
        return cls("huge", size_bytes=size_bytes, declare_length=declare_length)


@dataclass(frozen=True)
class ReceivedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    provider: str | None = None

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def raw(self) -> str:
        """Everything received, as text: for "the key was sent" / "was not" checks."""
        head = "\n".join(f"{k}: {v}" for k, v in self.headers.items())
        return f"{self.method} {self.path}?{self.query}\n{head}\n\n{self.body.decode('utf-8', 'replace')}"


@dataclass
class _State:
    keys: dict[str, str]
    record: bool
    root_provider: str | None = None
    queued: dict[str, deque[Fault | None]] = field(default_factory=dict)
    permanent: dict[str, Fault] = field(default_factory=dict)
    requests: list[ReceivedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)

    def next_fault(self, provider: str | None, path: str) -> Fault | None:
        with self.lock:
            for target in (path, provider, "*"):
                if target is None:
                    continue
                queue = self.queued.get(target)
                if queue:
                    return queue.popleft()
                if target in self.permanent:
                    return self.permanent[target]
        return None


class LoopbackFake:
    """Lifecycle, addresses, faults and recordings every loopback vendor fake shares: one
    threaded server on 127.0.0.1 whose handler (`handler_class`) reads the shared `_state`."""

    _state: _State
    _tls: ssl.SSLContext | None = None
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    def handler_class(self) -> type[_Handler]:
        """The request handler; a fake of other vendors overrides it."""
        return _Handler

    def start(self, port: int = 0) -> Self:
        handler = type("Handler", (self.handler_class(),), {"state": self._state})
        server = _Server(("127.0.0.1", port), handler)
        if self._tls is not None:
            server.socket = self._tls.wrap_socket(server.socket, server_side=True)
        self._server = server
        # A short poll interval keeps stop() fast (shutdown waits for the next poll).
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._state.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- addresses ----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        scheme = "https" if self._tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def base_url_for(self, provider: str) -> str:
        return f"{self.base_url}/{provider}"

    # --- faults and recordings ----------------------------------------------------------------

    def add_faults(self, target: str, *faults: Fault | None) -> None:
        with self._state.lock:
            self._state.queued.setdefault(target, deque()).extend(faults)

    def set_fault(self, target: str, fault: Fault) -> None:
        with self._state.lock:
            self._state.permanent[target] = fault

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    def requests_for(self, provider: str) -> list[ReceivedRequest]:
        return [r for r in self.requests if r.provider == provider]


class FakeVendorServer(LoopbackFake):
    def __init__(
        self,
        *,
        keys: dict[str, str] | None = None,
        record: bool = True,
        root_provider: str | None = None,
        tls: ssl.SSLContext | None = None,
    ):
        """`keys`: provider -> the only key accepted (others get 401); any non-empty key is
        accepted for providers not listed. `record=False` skips request recording.
        `root_provider`: the vendor served at unprefixed paths too, for an SDK that ignores the
        path of its base URL (firecrawl-py joins "/v2/search" to the host). `tls`: a server-side
        context (e.g. from `trustme`) to serve HTTPS instead of HTTP."""
        if root_provider is not None and root_provider not in SEARCH_ENDPOINTS:
            raise ValueError(f"unknown provider {root_provider!r}")
        self._state = _State(keys=dict(keys or {}), record=record, root_provider=root_provider)
        self._tls = tls

    def base_urls(self) -> dict[str, str]:
        return {provider: self.base_url_for(provider) for provider in SEARCH_ENDPOINTS}

    def clear_faults(self) -> None:
        with self._state.lock:
            self._state.queued.clear()
            self._state.permanent.clear()

    def reset(self, *, keys: dict[str, str] | None = None) -> None:
        """Forget faults and recorded requests (and optionally set the accepted keys)."""
        with self._state.lock:
            self._state.queued.clear()
            self._state.permanent.clear()
            self._state.requests.clear()
            if keys is not None:
                self._state.keys = dict(keys)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024  # the default backlog (5) resets connections under concurrency


class _Handler(BaseHTTPRequestHandler):
    state: _State
    protocol_version = "HTTP/1.1"  # keep-alive, like a real API front end
    disable_nagle_algorithm = True  # small keep-alive writes must not wait for delayed ACKs

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        provider, vendor_path = self._route_of(path)
        if self.state.record:
            received = ReceivedRequest(
                method=self.command,
                path=path,
                query=query,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                provider=provider,
            )
            with self.state.lock:
                self.state.requests.append(received)
        try:
            fault = self.state.next_fault(provider, path)
            if fault is not None and self._inject(fault):
                return
            self._answer(provider, vendor_path, query, body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout, body cap): fine

    def _route_of(self, path: str) -> tuple[str | None, str]:
        """The vendor a request path is for (None: no such prefix) and the vendor's own path."""
        provider, _, vendor_path = path.lstrip("/").partition("/")
        if provider not in SEARCH_ENDPOINTS and self.state.root_provider is not None:
            provider, vendor_path = self.state.root_provider, path.lstrip("/")
        return (provider if provider in SEARCH_ENDPOINTS else None), "/" + vendor_path

    def _key_ok(self, provider: str, header: str, prefix: str) -> bool:
        """A key was presented in `header` (after `prefix`), and it is the accepted one."""
        presented = self.headers.get(header, "")
        key = presented[len(prefix) :] if presented.startswith(prefix) else ""
        expected = self.state.keys.get(provider)
        return bool(key) and (expected is None or key == expected)

    # --- normal answers -----------------------------------------------------------------------

    def _answer(self, provider: str | None, vendor_path: str, query: str, body: bytes) -> None:
        if provider is None:
            return self._send_json(404, {"error": "unknown vendor prefix"})
        if vendor_path == HEALTHCHECKS.get(provider):
            return self._send_json(200, {"status": "ok"})
        method, search_path, auth_header, auth_prefix = SEARCH_ENDPOINTS[provider]
        if vendor_path != search_path:
            return self._send_json(404, {"error": f"no route {vendor_path}"})
        if self.command != method:
            return self._send_json(405, {"error": f"{provider} search takes {method}"})
        if not self._key_ok(provider, auth_header, auth_prefix):
            return self._send_json(401, {"error": "invalid API key"})
        text, count = query_and_count(provider, body, query)
        self._send_json(200, search_response(provider, text, count))

    def _send_json(self, status: int, document: Any) -> None:
        self._send(status, json.dumps(document).encode(), content_type="application/json")

    def _send(
        self,
        status: int,
        body: bytes,
        *,
        content_type: str = "application/json",
        headers: tuple[tuple[str, str], ...] = (),
        content_length: int | None = None,
    ) -> None:
        # One write for head and body: two small writes on a keep-alive socket cost latency.
        length = len(body) if content_length is None else content_length
        lines = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            f"Content-Type: {content_type}",
            f"Content-Length: {length}",
            f"X-Request-Id: fake-{next(_REQUEST_IDS)}",
            *(f"{name}: {value}" for name, value in headers),
        ]
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    # --- faults -------------------------------------------------------------------------------

    def _inject(self, fault: Fault) -> bool:
        """Apply `fault`; True when the response is complete (False: answer normally)."""
        if fault.kind == "slow":
            self.state.stopping.wait(fault.delay_s)
            return False
        if fault.kind == "status":
            self._send(fault.code, fault.body or b"", headers=fault.headers)
        elif fault.kind == "reset":
            self._abort()
        elif fault.kind == "reset_mid_body":
            self._send_partial(b'{"results": [{"url": "https://example.org/1", "title": "x"}]}')
            self._abort()
        elif fault.kind == "malformed":
            self._send(200, fault.body or b"")
        elif fault.kind == "truncated":
            self._send_partial(b'{"results": [{"url": "https://example.org/1", "tit')
            self.close_connection = True
        elif fault.kind == "huge":
            self._send_huge(fault.size_bytes, fault.declare_length)
        else:
            raise ValueError(f"unknown fault kind {fault.kind!r}")
        return True

    def _send_partial(self, sent: bytes) -> None:
        self._send(200, sent, content_length=len(sent) * 4)
        self.wfile.flush()
        self.close_connection = True

    def _abort(self) -> None:
        # SO_LINGER 0: close() sends RST instead of FIN, i.e. "connection reset by peer".
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def _send_huge(self, size: int, declare_length: bool) -> None:
        block = b'{"pad": "' + b"x" * 65_000 + b'"}\n'
        head = ["HTTP/1.1 200 OK", "Content-Type: application/json"]
        head.append(f"Content-Length: {size}" if declare_length else "Transfer-Encoding: chunked")
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        sent = 0
        while sent < size and not self.state.stopping.is_set():
            piece = block[: size - sent]
            if declare_length:
                self.wfile.write(piece)
            else:
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            sent += len(piece)
        if not declare_length:
            self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--record", action="store_true", help="keep every request in memory")
    args = parser.parse_args(argv)
    server = FakeVendorServer(record=args.record).start(args.port)
    print(f"PORT {server.port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
