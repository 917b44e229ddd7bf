"""A lean HTTP/1.1 transport for httpx: an asyncio `Protocol` per keep-alive connection.

    httpx.AsyncClient(transport=KeepAliveTransport(ssl_context=...))

httpx stays the API (clients, requests, responses, exceptions); only the wire layer changes.
httpcore + anyio spend ~1 ms of CPU per request on the 2-core dev VM (locks, pool, stream and
cancel-scope bookkeeping around every read and write), and h11's general-purpose state machine
another ~0.15 ms; this module writes the request head itself and parses the response with the
small subset of RFC 9112 a client needs (status line, header fields, Content-Length, chunked or
close-delimited bodies, 1xx skipped). What it keeps from httpcore:

* connect / read / write / pool timeouts from the request's `timeout` extension, raised as
  httpx.ConnectTimeout / ReadTimeout / WriteTimeout / PoolTimeout;
* a reset before the status line is httpx.ReadError, a close before it
  httpx.RemoteProtocolError; after it (a cut body, a short Content-Length) the same errors come
  from the response stream;
* backpressure: at most `_HIGH_WATER` unread bytes are buffered, so a caller that stops reading
  (the body-size cap) does not buffer the rest of a flood;
* TLS for https (the shared context, ALPN http/1.1), keep-alive reuse with an expiry, and never
  reusing a connection whose response was not read to the end, was cancelled, or was framed by
  the connection closing.

Proxies are not handled here: httpx mounts its own transports for proxy URLs from the
environment, as it does with the default transport.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from collections.abc import AsyncIterator
from time import monotonic

import httpx

_HIGH_WATER = 256 * 1024  # unread bytes buffered before reading from the socket pauses
_MAX_HEAD_BYTES = 256 * 1024  # status line + header fields
_MAX_LINE_BYTES = 8 * 1024  # a chunk-size line or a trailer field
_DEFAULT_PORTS = {b"http": 80, b"https": 443}
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_STATUS_LINE = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: (.*))?")
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
_NO_BODY_STATUSES = frozenset({204, 304})


class KeepAliveTransport(httpx.AsyncBaseTransport):
    """Opens at most `max_connections` connections at once (None: no limit; requests over the
    limit wait, up to the pool timeout) and keeps up to `max_keepalive_connections` idle ones
    per origin for `keepalive_expiry_s`."""

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None = None,
        max_connections: int | None = 1,
        max_keepalive_connections: int | None = None,
        keepalive_expiry_s: float = 5.0,
    ):
        self._ssl_context = ssl_context
        self._max_keepalive = (
            max_keepalive_connections if max_keepalive_connections is not None else max_connections
        )
        self._slots = asyncio.Semaphore(max_connections) if max_connections else None
        self._keepalive_expiry_s = keepalive_expiry_s
        self._idle: dict[tuple[bytes, bytes, int], list[_Connection]] = {}
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise RuntimeError("the transport is closed")
        url = request.url
        scheme = url.raw_scheme
        if scheme not in _DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}")
        host = url.raw_host
        if not host:
            raise httpx.UnsupportedProtocol(f"no host in {url!r}")
        origin = (scheme, host, url.port or _DEFAULT_PORTS[scheme])
        timeouts = request.extensions.get("timeout") or {}
        head = _request_head(request)
        if self._slots is not None:
            await _acquire(self._slots, timeouts.get("pool"))
        try:
            connection = self._idle_connection(origin)
            if connection is None:
                connection = await _Connection.open(origin, self._ssl_context, timeouts)
            stream = await connection.exchange(request, head, timeouts, self)
        except BaseException:
            if self._slots is not None:
                self._slots.release()
            raise
        return httpx.Response(
            stream.status_code,
            headers=stream.headers,
            stream=stream,
            extensions={"http_version": stream.http_version, "reason_phrase": stream.reason},
        )

    def _idle_connection(self, origin: tuple[bytes, bytes, int]) -> _Connection | None:
        idle = self._idle.get(origin)
        now = monotonic()
        while idle:
            connection = idle.pop()  # LIFO: the warmest connection
            if connection.reusable(now, self._keepalive_expiry_s):
                return connection
            connection.close()
        return None

    def _release(self, connection: _Connection, *, reusable: bool) -> None:
        if self._slots is not None:
            self._slots.release()
        if not reusable or self._closed:
            connection.close()
            return
        idle = self._idle.setdefault(connection.origin, [])
        if self._max_keepalive is not None and len(idle) >= self._max_keepalive:
            connection.close()
            return
        connection.idle_since = monotonic()
        idle.append(connection)

    async def aclose(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


async def _acquire(semaphore: asyncio.Semaphore, timeout: float | None) -> None:
    if not semaphore.locked():
        await semaphore.acquire()
        return
    try:
        async with asyncio.timeout(timeout):
            await semaphore.acquire()
    except TimeoutError:
        raise httpx.PoolTimeout("timed out waiting for a connection") from None


# --- the request head ----------------------------------------------------------------------------

_checked_names: set[bytes] = set()


def _request_head(request: httpx.Request) -> bytes:
    """`METHOD target HTTP/1.1`, the header fields, a blank line; refuses anything that could
    split the head (CR, LF or NUL in a value, a name that is not a token)."""
    method = request.method.encode("ascii")
    target = request.url.raw_path
    if not _TOKEN.fullmatch(method) or not target or b" " in target or b"\r" in target:
        raise httpx.LocalProtocolError(f"illegal request line {method!r} {target!r}")
    fields = request.headers.raw
    lines = [b"%s %s HTTP/1.1" % (method, target)]
    for name, value in fields:
        if name not in _checked_names:
            if not _TOKEN.fullmatch(name):
                raise httpx.LocalProtocolError(f"illegal header name {name!r}")
            _checked_names.add(name)
        lines.append(name + b": " + value)
    head = b"\r\n".join(lines)
    # One CRLF per line break we put there, none inside a value.
    if head.count(b"\n") != len(fields) or head.count(b"\r") != len(fields) or b"\0" in head:
        raise httpx.LocalProtocolError("illegal character (CR, LF or NUL) in a header value")
    return head + b"\r\n\r\n"


def _is_chunked_request(request: httpx.Request) -> bool:
    return "chunked" in request.headers.get("transfer-encoding", "").lower()


# --- one connection ------------------------------------------------------------------------------


class _Connection(asyncio.Protocol):
    def __init__(self, origin: tuple[bytes, bytes, int]):
        self.origin = origin
        self.idle_since = 0.0
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._reading_paused = False
        self._eof = False
        self._lost: BaseException | None = None
        self._closed = False
        self._busy = False  # an exchange is in progress (its response not read to the end)
        self._waiter: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None

    @classmethod
    async def open(
        cls, origin: tuple[bytes, bytes, int], ssl_context: ssl.SSLContext | None, timeouts
    ) -> _Connection:
        scheme, raw_host, port = origin
        host = raw_host.decode("ascii")
        tls = None
        if scheme == b"https":
            tls = ssl_context if ssl_context is not None else httpx.create_ssl_context()
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeouts.get("connect")):
                _, connection = await loop.create_connection(
                    lambda: cls(origin),
                    host,
                    port,
                    ssl=tls,
                    server_hostname=host if tls is not None else None,
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(f"{type(exc).__name__}: {exc}") from exc
        return connection

    # asyncio.Protocol (asyncio already sets TCP_NODELAY on TCP transports)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if len(self._buffer) > _HIGH_WATER and not self._reading_paused:
            self._reading_paused = True
            self._transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._lost = exc
        self._closed = True
        self._wake()
        self.resume_writing()

    def pause_writing(self) -> None:
        self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # state

    def reusable(self, now: float, expiry_s: float) -> bool:
        return (
            not self._closed
            and not self._eof
            and not self._busy
            and not self._buffer
            and now - self.idle_since < expiry_s
        )

    def close(self) -> None:
        self._closed = True
        if self._transport is not None:
            self._transport.close()

    # one exchange

    async def exchange(
        self, request: httpx.Request, head: bytes, timeouts, pool: KeepAliveTransport
    ) -> _ResponseStream:
        self._busy = True
        try:
            await self._send(request, head, timeouts.get("write"))
            read_timeout = timeouts.get("read")
            while True:
                version, status, reason, fields = await self._read_head(read_timeout)
                if status >= 200:
                    break
                if status == 101:
                    raise httpx.RemoteProtocolError("unexpected 101 Switching Protocols")
        except BaseException:
            self.close()
            raise
        return _ResponseStream(
            self, request.method, version, status, reason, fields, read_timeout, pool
        )

    async def _send(self, request: httpx.Request, head: bytes, write_timeout: float | None) -> None:
        try:
            content = request.content
        except httpx.RequestNotRead:
            content = None
        if content is not None:
            await self._write(head + content, write_timeout)
            return
        await self._write(head, write_timeout)
        chunked = _is_chunked_request(request)
        async for piece in request.stream:
            if piece:
                data = b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece
                await self._write(data, write_timeout)
        if chunked:
            await self._write(b"0\r\n\r\n", write_timeout)

    async def _write(self, data: bytes, timeout: float | None) -> None:
        if self._closed or self._transport.is_closing():
            raise httpx.WriteError(_describe_loss(self._lost, "connection closed before sending"))
        self._transport.write(data)
        if self._drained is not None:
            try:
                async with asyncio.timeout(timeout):
                    await asyncio.shield(self._drained)
            except TimeoutError:
                raise httpx.WriteTimeout("write timed out") from None
            if self._lost is not None:
                raise httpx.WriteError(_describe_loss(self._lost, "connection lost"))

    # reading

    def _take(self, limit: int) -> bytes:
        buffer = self._buffer
        if len(buffer) <= limit:
            data = bytes(buffer)
            buffer.clear()
        else:
            data = bytes(buffer[:limit])
            del buffer[:limit]
        if self._reading_paused and len(buffer) <= _HIGH_WATER // 2:
            self._reading_paused = False
            self._transport.resume_reading()
        return data

    async def _more(self, read_timeout: float | None) -> bool:
        """Wait for more bytes; False at a clean EOF, ReadError after a reset."""
        if self._lost is not None:
            raise httpx.ReadError(_describe_loss(self._lost, "connection reset"))
        if self._eof:
            return False
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = loop.call_later(read_timeout, _expire, waiter) if read_timeout is not None else None
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()
        if self._lost is not None and not self._buffer:
            raise httpx.ReadError(_describe_loss(self._lost, "connection reset"))
        return bool(self._buffer) or not self._eof

    async def _read_until(self, marker: bytes, limit: int, read_timeout, what: str) -> bytes:
        """Bytes up to and including `marker` (at most `limit` bytes)."""
        searched = 0
        while True:
            end = self._buffer.find(marker, searched)
            if end >= 0:
                return self._take(end + len(marker))
            if len(self._buffer) > limit:
                raise httpx.RemoteProtocolError(f"{what} longer than {limit} bytes")
            searched = max(0, len(self._buffer) - len(marker) + 1)
            if not await self._more(read_timeout):
                if what == "response head" and not self._buffer:
                    raise httpx.RemoteProtocolError(
                        "Server disconnected without sending a response."
                    )
                raise httpx.RemoteProtocolError(f"peer closed connection inside the {what}")

    async def _read_head(self, read_timeout) -> tuple[bytes, int, bytes, list[tuple[bytes, bytes]]]:
        head = await self._read_until(b"\r\n\r\n", _MAX_HEAD_BYTES, read_timeout, "response head")
        lines = head[:-4].split(b"\r\n")
        status = _STATUS_LINE.fullmatch(lines[0])
        if status is None:
            raise httpx.RemoteProtocolError(f"malformed status line {lines[0][:100]!r}")
        return (
            b"HTTP/1." + status.group(1),
            int(status.group(2)),
            status.group(3) or b"",
            _header_fields(lines[1:]),
        )


def _header_fields(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
    fields = []
    for line in lines:
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):
            raise httpx.RemoteProtocolError(f"malformed header line {line[:100]!r}")
        fields.append((name, value.strip(b" \t")))
    return fields


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(httpx.ReadTimeout("read timed out"))


def _describe_loss(exc: BaseException | None, default: str) -> str:
    if exc is None:
        return default
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


# --- the response body ---------------------------------------------------------------------------


class _ResponseStream(httpx.AsyncByteStream):
    """The body of one response. The connection goes back to the pool only when the body was
    read to its framed end and both sides allow keep-alive; otherwise it is closed."""

    def __init__(
        self,
        connection: _Connection,
        method: str,
        http_version: bytes,
        status_code: int,
        reason: bytes,
        fields: list[tuple[bytes, bytes]],
        read_timeout: float | None,
        pool: KeepAliveTransport,
    ):
        self.status_code = status_code
        self.http_version = http_version
        self.reason = reason
        self.headers = fields
        self._connection = connection
        self._read_timeout = read_timeout
        self._pool = pool
        self._released = False
        keep_alive = http_version == b"HTTP/1.1"
        transfer_encoding = content_length = None
        for name, value in fields:
            lowered = name.lower()
            if lowered == b"content-length":
                content_length = _content_length(value, content_length)
            elif lowered == b"transfer-encoding":
                transfer_encoding = value.lower()
            elif lowered == b"connection" and b"close" in value.lower():
                keep_alive = False
        if method == "HEAD" or status_code in _NO_BODY_STATUSES:
            self._framing, self._length = "none", 0
        elif transfer_encoding is not None:
            if transfer_encoding.rsplit(b",", 1)[-1].strip() != b"chunked":
                self._framing, self._length = "close", None
                keep_alive = False
            else:
                self._framing, self._length = "chunked", None
                keep_alive = keep_alive and content_length is None
        elif content_length is not None:
            self._framing, self._length = "length", content_length
        else:
            self._framing, self._length = "close", None
            keep_alive = False
        self._keep_alive = keep_alive

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            if self._framing == "length":
                async for piece in self._fixed(self._length):
                    yield piece
            elif self._framing == "chunked":
                async for piece in self._chunked():
                    yield piece
            elif self._framing == "close":
                async for piece in self._until_close():
                    yield piece
            self._finish(complete=True)
        except BaseException:
            self._finish(complete=False)
            raise

    async def _fixed(self, length: int) -> AsyncIterator[bytes]:
        connection = self._connection
        remaining = length
        while remaining:
            if not connection._buffer and not await connection._more(self._read_timeout):
                raise httpx.RemoteProtocolError(
                    "peer closed connection without sending complete message body: "
                    f"received {length - remaining} bytes, expected {length}"
                )
            if connection._buffer:
                piece = connection._take(remaining)
                remaining -= len(piece)
                yield piece

    async def _chunked(self) -> AsyncIterator[bytes]:
        connection, timeout = self._connection, self._read_timeout
        while True:
            line = await connection._read_until(b"\r\n", _MAX_LINE_BYTES, timeout, "chunked body")
            size_text = line[:-2].split(b";", 1)[0].strip(b" \t")
            if not _CHUNK_SIZE.fullmatch(size_text):
                raise httpx.RemoteProtocolError(f"malformed chunk size line {line[:100]!r}")
            size = int(size_text, 16)
            if size == 0:
                break
            async for piece in self._fixed(size):
                yield piece
            if await connection._read_until(b"\r\n", 2, timeout, "chunked body") != b"\r\n":
                raise httpx.RemoteProtocolError("missing CRLF after a chunk")
        while await connection._read_until(b"\r\n", _MAX_LINE_BYTES, timeout, "trailer") != b"\r\n":
            pass  # trailer fields: not used

    async def _until_close(self) -> AsyncIterator[bytes]:
        connection = self._connection
        while connection._buffer or await connection._more(self._read_timeout):
            if connection._buffer:
                yield connection._take(len(connection._buffer))

    def _finish(self, *, complete: bool) -> None:
        if self._released:
            return
        self._released = True
        connection = self._connection
        reusable = complete and self._keep_alive and not connection._buffer
        if reusable:
            connection._busy = False
        self._pool._release(connection, reusable=reusable)

    async def aclose(self) -> None:
        self._finish(complete=False)


def _content_length(value: bytes, previous: int | None) -> int:
    values = {v.strip(b" \t") for v in value.split(b",")}
    if len(values) != 1 or not next(iter(values)).isdigit() or len(next(iter(values))) > 18:
        raise httpx.RemoteProtocolError(f"malformed Content-Length {value[:40]!r}")
    length = int(values.pop())
    if previous is not None and previous != length:
        raise httpx.RemoteProtocolError("conflicting Content-Length headers")
    return length
