"""Provider clients keep no cookies: a vendor's Set-Cookie (a session, a load-balancer pin, a
tracking id) must not ride along on later calls, to that vendor or any other."""

from __future__ import annotations

import asyncio
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

from collectors.http import new_async_client, slot_clients


class _CookieSetter(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[str | None]] = []  # each server gets its own list (_serve)

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        type(self).seen.append(self.headers.get("Cookie"))
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Set-Cookie", "session=vendor-session-id; Path=/")
        self.send_header("Set-Cookie", "lb=pin-7; Path=/; Domain=127.0.0.1")
        self.end_headers()
        self.wfile.write(body)


def _serve():
    handler = type("Handler", (_CookieSetter,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}).start()
    return server, handler


def test_a_vendors_set_cookie_never_reaches_the_next_request():
    server, handler = _serve()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/anything"

    async def go():
        (slot,) = slot_clients(1)
        other = new_async_client()
        async with slot, other:
            first = await slot.get(url)
            assert first.headers.get_list("set-cookie")  # the vendor did set cookies...
            await slot.get(url)
            await other.get(url)
            return len(slot.cookies), len(other.cookies)

    try:
        kept = asyncio.run(go())
    finally:
        server.shutdown()
        server.server_close()
    assert handler.seen == [None, None, None]  # ...and no request carried one back
    assert kept == (0, 0)
