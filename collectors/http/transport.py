"""A lean HTTP/1.1 transport for httpx: h11 over an asyncio `Protocol`, keep-alive connections.

    httpx.AsyncClient(transport=KeepAliveTransport(ssl_context=...))

httpx stays the API (clients, requests, responses, exceptions); only the wire layer changes.
httpcore + anyio spend ~1.2 ms of CPU per request on this machine (lock, pool, stream and
cancel-scope bookkeeping around each read and write); the same exchange on a plain asyncio
protocol with h11 costs ~0.25 ms. What it keeps from httpcore:

* connect / read / write / pool timeouts from the request's `timeout` extension, raised as
  httpx.ConnectTimeout / ReadTimeout / WriteTimeout / PoolTimeout;
* a reset or EOF before the status line is httpx.ReadError / RemoteProtocolError, after it (a
  cut body, a short Content-Length) the same errors from the response stream;
* backpressure: at most `_HIGH_WATER` unread bytes are buffered, so a caller that stops
  reading (the body-size cap) does not buffer the rest of a flood;
* TLS for https (the shared context, ALPN http/1.1), keep-alive reuse with an expiry, and
  never reusing a connection whose response was not read to the end (or was cancelled).

Proxies are not handled here: httpx mounts its own transports for proxy URLs from the
environment, as it does with the default transport.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from time import monotonic

import h11
import httpx

_HIGH_WATER = 256 * 1024  # unread bytes buffered before reading from the socket pauses
_MAX_HEADER_BYTES = 256 * 1024
_DEFAULT_PORTS = {b"http": 80, b"https": 443}


class KeepAliveTransport(httpx.AsyncBaseTransport):
    """Keeps up to `max_keepalive_connections` idle connections per origin and opens at most
    `max_connections` at once (None: no limit); requests over the limit wait (pool timeout)."""

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
        if self._slots is not None:
            await _acquire(self._slots, timeouts.get("pool"))
        try:
            connection = self._idle_connection(origin)
            if connection is None:
                connection = await _Connection.open(origin, self._ssl_context, timeouts)
            stream = await connection.exchange(request, timeouts, self)
        except BaseException:
            if self._slots is not None:
                self._slots.release()
            raise
        return httpx.Response(
            stream.status_code,
            headers=stream.headers,
            stream=stream,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": stream.reason},
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


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection; h11 parses what the socket delivered when asked to."""

    def __init__(self, origin: tuple[bytes, bytes, int]):
        self.origin = origin
        self.idle_since = 0.0
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=_MAX_HEADER_BYTES)
        self._transport: asyncio.Transport | None = None
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._reading_paused = False
        self._eof = False
        self._lost: BaseException | None = None
        self._closed = False
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

    # --- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # asyncio already sets TCP_NODELAY on TCP transports.
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._buffer.append(data)
        self._buffered += len(data)
        if self._buffered > _HIGH_WATER and not self._reading_paused:
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
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

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

    # --- state --------------------------------------------------------------------------------

    def reusable(self, now: float, expiry_s: float) -> bool:
        return (
            not self._closed
            and not self._eof
            and not self._buffer
            and self._h11.our_state is h11.IDLE
            and now - self.idle_since < expiry_s
        )

    def close(self) -> None:
        self._closed = True
        if self._transport is not None:
            self._transport.close()

    # --- one exchange -------------------------------------------------------------------------

    async def exchange(
        self, request: httpx.Request, timeouts, pool: KeepAliveTransport
    ) -> _ResponseStream:
        try:
            await self._send(request, timeouts.get("write"))
            read_timeout = timeouts.get("read")
            event = await self._next_event(read_timeout)
            while isinstance(event, h11.InformationalResponse):
                event = await self._next_event(read_timeout)
            if not isinstance(event, h11.Response):
                raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} from server")
        except BaseException:
            self.close()
            raise
        return _ResponseStream(self, event, read_timeout, pool)

    async def _send(self, request: httpx.Request, write_timeout: float | None) -> None:
        if self._closed:
            raise httpx.WriteError("connection closed")
        h11_request = h11.Request(
            method=request.method,
            target=request.url.raw_path,
            headers=request.headers.raw,
        )
        try:
            content = request.content
        except httpx.RequestNotRead:
            content = None
        try:
            if content is not None:
                data = self._h11.send(h11_request)
                if content:
                    data += self._h11.send(h11.Data(data=content))
                data += self._h11.send(h11.EndOfMessage())
                await self._write(data, write_timeout)
            else:
                await self._write(self._h11.send(h11_request), write_timeout)
                async for chunk in request.stream:
                    await self._write(self._h11.send(h11.Data(data=chunk)), write_timeout)
                await self._write(self._h11.send(h11.EndOfMessage()), write_timeout)
        except h11.LocalProtocolError as exc:
            raise httpx.LocalProtocolError(str(exc)) from exc

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

    async def _next_event(self, read_timeout: float | None):
        connection = self._h11
        while True:
            try:
                event = connection.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc)) from exc
            if event is not h11.NEED_DATA:
                return event
            if self._buffer:
                data = b"".join(self._buffer) if len(self._buffer) > 1 else self._buffer[0]
                self._buffer.clear()
                self._buffered = 0
                if self._reading_paused:
                    self._reading_paused = False
                    self._transport.resume_reading()
                connection.receive_data(data)
                continue
            if self._lost is not None:
                raise httpx.ReadError(_describe_loss(self._lost, "connection reset"))
            if self._eof:
                if connection.their_state is h11.SEND_RESPONSE and not _response_started(
                    connection
                ):
                    raise httpx.RemoteProtocolError(
                        "Server disconnected without sending a response."
                    )
                connection.receive_data(b"")
                continue
            await self._wait(read_timeout)

    async def _wait(self, read_timeout: float | None) -> None:
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = None
        if read_timeout is not None:
            timer = loop.call_later(read_timeout, _expire, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(httpx.ReadTimeout("read timed out"))


def _response_started(connection: h11.Connection) -> bool:
    # h11 keeps unparsed bytes in its receive buffer; any at all means the status line began.
    return bool(connection.trailing_data[0])


def _describe_loss(exc: BaseException | None, default: str) -> str:
    if exc is None:
        return default
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class _ResponseStream(httpx.AsyncByteStream):
    """The body of one response; the connection goes back to the pool only when read to the end
    (and the server did not ask to close it)."""

    def __init__(
        self,
        connection: _Connection,
        response: h11.Response,
        read_timeout: float | None,
        pool: KeepAliveTransport,
    ):
        self.status_code = response.status_code
        self.headers = response.headers.raw_items()
        self.reason = response.reason
        self._connection = connection
        self._read_timeout = read_timeout
        self._pool = pool
        self._released = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        try:
            while not self._released:
                event = await connection._next_event(self._read_timeout)
                if isinstance(event, h11.Data):
                    yield bytes(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    self._finish(complete=True)
                else:
                    raise httpx.RemoteProtocolError(
                        f"unexpected {type(event).__name__} in a response body"
                    )
        except BaseException:
            self._finish(complete=False)
            raise

    def _finish(self, *, complete: bool) -> None:
        if self._released:
            return
        self._released = True
        connection = self._connection
        reusable = False
        if complete and connection._h11.our_state is h11.DONE:
            try:
                connection._h11.start_next_cycle()
                reusable = True
            except h11.LocalProtocolError:  # the server asked to close (Connection: close)
                reusable = False
        self._pool._release(connection, reusable=reusable)

    async def aclose(self) -> None:
        self._finish(complete=False)
