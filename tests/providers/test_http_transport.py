"""KeepAliveTransport on its own, against a scripted loopback server: framing, keep-alive reuse,
resets, timeouts, backpressure, TLS; and RequestBuilder against `client.build_request`."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import struct
import subprocess

import httpx
import pytest

from collectors.http import ProviderClient, Redactor
from collectors.http.request_builder import RequestBuilder
from collectors.http.transport import _HIGH_WATER, KeepAliveTransport
from collectors.search import LANES
from tests.providers.conftest import CANARY_KEYS

OK = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok": 1}\r\n'


class Script:
    """A loopback server that reads each request and answers with the next scripted action:
    bytes to send, or a callable(writer) for anything else. Counts connections and requests."""

    def __init__(self, *actions, tls: ssl.SSLContext | None = None):
        self.actions = list(actions)
        self.connections = 0
        self.requests: list[bytes] = []
        self.tls = tls

    async def __aenter__(self) -> Script:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self.tls)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc) -> None:
        self.server.close()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/search"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.actions:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                self.requests.append(head + await reader.readexactly(length))
                action = self.actions.pop(0)
                if callable(action):
                    if await action(writer) == "close":
                        return
                else:
                    writer.write(action)
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def send_reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST ("connection reset by peer"), not a FIN."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def client(**transport_options) -> ProviderClient:
    return ProviderClient(transport=KeepAliveTransport(**transport_options))


async def get(http: ProviderClient, url: str, **kwargs) -> httpx.Response:
    response = await http.send_once(http.build_request("POST", url, json={"q": 1}, **kwargs))
    try:
        await response.aread()
    finally:
        await response.aclose()
    return response


def test_keep_alive_reuses_one_connection(run):
    async def scenario():
        async with Script(OK, OK, OK) as server, client() as http:
            bodies = [(await get(http, server.url)).json() for _ in range(3)]
            return bodies, server.connections, server.requests

    bodies, connections, requests = run(scenario())
    assert bodies == [{"ok": 1}] * 3
    assert connections == 1
    assert requests[0].startswith(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1:")
    assert requests[0].endswith(b'\r\n\r\n{"q":1}')


def test_connection_close_and_http_1_0_are_not_reused(run):
    close = OK.replace(b"Content-Length", b"Connection: close\r\nContent-Length")

    async def scenario():
        async with Script(close, OK) as server, client() as http:
            await get(http, server.url)
            await get(http, server.url)
            return server.connections

    assert run(scenario()) == 2


def test_a_connection_the_server_closed_while_idle_is_replaced(run):
    async def close_after(writer):
        writer.write(OK)
        await writer.drain()
        return "close"

    async def scenario():
        async with Script(close_after, OK) as server, client() as http:
            await get(http, server.url)
            await asyncio.sleep(0.05)  # the FIN arrives while the connection is idle
            await get(http, server.url)
            return server.connections

    assert run(scenario()) == 2


def test_chunked_body_with_extensions_and_trailers(run):
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"4;ext=1\r\nabcd\r\n3\r\nefg\r\n0\r\nX-Trailer: 1\r\n\r\n"
    )

    async def scenario():
        async with Script(chunked, OK) as server, client() as http:
            first = await get(http, server.url)
            second = await get(http, server.url)
            return first.content, second.status_code, server.connections

    assert run(scenario()) == (b"abcdefg", 200, 1)


def test_close_delimited_body_and_bodyless_statuses(run):
    no_length = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end"

    async def until_close(writer):
        writer.write(no_length)
        await writer.drain()
        return "close"

    async def scenario():
        async with Script(until_close) as server, client() as http:
            body = (await get(http, server.url)).content
        async with Script(b"HTTP/1.1 204 No Content\r\n\r\n", OK) as server, client() as http:
            empty = await get(http, server.url)
            after = await get(http, server.url)
            return body, empty.content, after.json(), server.connections

    assert run(scenario()) == (b"until the end", b"", {"ok": 1}, 1)


def test_informational_responses_are_skipped(run):
    async def scenario():
        async with Script(b"HTTP/1.1 100 Continue\r\n\r\n" + OK) as server, client() as http:
            return (await get(http, server.url)).json()

    assert run(scenario()) == {"ok": 1}


def test_reset_before_the_status_line_is_a_read_error(run):
    async def reset(writer):
        send_reset(writer)
        return "close"

    async def scenario():
        async with Script(reset) as server, client() as http:
            await get(http, server.url)

    with pytest.raises(httpx.ReadError):
        run(scenario())


def test_close_before_the_status_line_is_a_protocol_error(run):
    async def close(writer):
        return "close"

    async def scenario():
        async with Script(close) as server, client() as http:
            await get(http, server.url)

    with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
        run(scenario())


def test_reset_mid_body_fails_the_body_and_drops_the_connection(run):
    async def cut(writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 100)
        await writer.drain()
        await asyncio.sleep(0.02)
        send_reset(writer)
        return "close"

    async def scenario():
        async with Script(cut, OK) as server, client() as http:
            with pytest.raises(httpx.ReadError):
                await get(http, server.url)
            assert (await get(http, server.url)).json() == {"ok": 1}
            return server.connections

    assert run(scenario()) == 2


def test_short_content_length_then_close_is_a_protocol_error(run):
    async def short(writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 10)
        await writer.drain()
        return "close"

    async def scenario():
        async with Script(short) as server, client() as http:
            await get(http, server.url)

    with pytest.raises(httpx.RemoteProtocolError, match="received 10 bytes, expected 1000"):
        run(scenario())


@pytest.mark.parametrize(
    "response",
    [
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"HTTP/2 200 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nBad Header\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ],
    ids=["status", "version", "header", "two-lengths", "chunk-size"],
)
def test_malformed_responses_are_protocol_errors(run, response):
    async def scenario():
        async with Script(response) as server, client() as http:
            await get(http, server.url)

    with pytest.raises(httpx.RemoteProtocolError):
        run(scenario())


def test_read_timeout_when_the_server_stays_silent(run):
    async def silent(writer):
        await asyncio.sleep(2)
        return "close"

    async def scenario():
        async with Script(silent) as server, client() as http:
            await get(http, server.url, timeout=httpx.Timeout(5.0, read=0.1))

    with pytest.raises(httpx.ReadTimeout):
        run(scenario())


def test_connect_error_on_a_closed_port(run):
    async def scenario():
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        async with client() as http:
            await get(http, f"http://127.0.0.1:{port}/")

    with pytest.raises(httpx.ConnectError):
        run(scenario())


def test_a_reader_that_stops_early_does_not_buffer_the_flood(run):
    size = 20 * _HIGH_WATER

    async def flood(writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
        try:
            for _ in range(size // 65536):
                writer.write(b"x" * 65536)
                await writer.drain()
        except ConnectionError:
            pass
        return "close"

    async def scenario():
        async with Script(flood) as server, client() as http:
            response = await http.send_once(http.build_request("GET", server.url))
            read = 0
            async for chunk in response.aiter_raw():
                read += len(chunk)
                if read > 2 * _HIGH_WATER:
                    break
            await asyncio.sleep(0.1)  # the server keeps sending; we must not keep buffering
            connection = response.stream._connection
            buffered = len(connection._buffer)
            await response.aclose()
            return read, buffered, connection._closed

    read, buffered, closed = run(scenario())
    assert read > 2 * _HIGH_WATER
    assert buffered <= _HIGH_WATER + 256 * 1024  # paused at the high-water mark
    assert closed  # an unfinished body never goes back to the pool


def test_pool_limit_queues_and_times_out(run):
    async def slow(writer):
        await asyncio.sleep(0.3)
        writer.write(OK)
        await writer.drain()

    async def scenario():
        async with Script(slow) as server, client(max_connections=1) as http:
            first = asyncio.create_task(get(http, server.url))
            await asyncio.sleep(0.05)
            with pytest.raises(httpx.PoolTimeout):
                await get(http, server.url, timeout=httpx.Timeout(5.0, pool=0.05))
            return (await first).json()

    assert run(scenario()) == {"ok": 1}


def test_header_values_cannot_split_the_request(run):
    async def scenario():
        async with Script(OK) as server, client() as http:
            await get(http, server.url, headers={"x-evil": "a\r\nInjected: yes"})

    with pytest.raises(httpx.LocalProtocolError):
        run(scenario())


def test_cancelled_exchange_closes_its_connection(run):
    async def slow(writer):
        await asyncio.sleep(0.5)
        writer.write(OK)
        await writer.drain()

    async def scenario():
        async with Script(slow, OK) as server, client() as http:
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.1):
                    await get(http, server.url)
            assert (await get(http, server.url)).json() == {"ok": 1}
            return server.connections

    assert run(scenario()) == 2


# --- TLS -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))
    trusting.set_alpn_protocols(["http/1.1"])
    return server, trusting


def test_https_uses_tls_and_verifies_the_certificate(run, self_signed):
    server_context, trusting = self_signed

    async def scenario():
        async with Script(OK, OK, tls=server_context) as server:
            async with client(ssl_context=trusting) as http:
                bodies = [(await get(http, server.url)).json() for _ in range(2)]
            async with client(ssl_context=ssl.create_default_context()) as untrusting:
                with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                    await get(untrusting, server.url)
            return bodies, server.connections

    bodies, connections = run(scenario())
    assert bodies == [{"ok": 1}] * 2
    assert connections >= 1


def test_httpcore_stays_available_as_the_wire(run):
    from collectors.http import new_async_client

    async def scenario():
        async with Script(OK) as server, new_async_client(transport="httpcore") as http:
            response = await http.post(server.url, json={"q": 1})
            return type(http._transport).__name__, response.json()

    assert run(scenario()) == ("AsyncHTTPTransport", {"ok": 1})


# --- RequestBuilder --------------------------------------------------------------------------------


@pytest.mark.parametrize("lane", sorted(LANES))
def test_request_builder_matches_httpx_build_request(lane):
    spec = LANES[lane]
    http = ProviderClient(transport=KeepAliveTransport())
    timeout = httpx.Timeout(30.0, connect=10.0)
    builder = RequestBuilder(http, timeout, Redactor(CANARY_KEYS.values()))
    key = CANARY_KEYS[spec.key_env]
    for query in ("Who wrote “Hamlet”?", "a&b=c d/é"):
        request = spec.build_request(spec.base_url, key, query, 10)
        ours = builder.build(request)
        theirs = http.build_request(
            request.method,
            request.url,
            params=request.params,
            headers=request.headers,
            json=request.json_body,
            timeout=timeout,
        )
        assert ours.method == theirs.method
        assert str(ours.url) == str(theirs.url)
        assert ours.headers.multi_items() == theirs.headers.multi_items()
        assert ours.content == theirs.content
        assert ours.extensions == theirs.extensions
        recorded = builder.record(ours, request.json_body)
        expected = Redactor(CANARY_KEYS.values()).request(
            theirs.method, str(theirs.url), theirs.headers, request.json_body
        )
        assert recorded == expected
        assert key not in recorded.model_dump_json()


def test_request_builder_defers_to_the_client_when_it_adds_a_base_url():
    http = httpx.AsyncClient(base_url="http://example.test/api/")
    builder = RequestBuilder(http, httpx.Timeout(1.0), Redactor())
    request = LANES["exa_search_auto"].build_request("search-host", "k", "q", 10)
    assert builder.build(request).url == http.build_request("POST", "search-host/search").url
