"""The local fetcher scopes cookies to one URL: a page's Set-Cookie rides along on the later hops
of that URL's redirect chain (a consent redirect needs it) and never on the fetch of another
page of the benchmark, even when both fetches share one client."""

from __future__ import annotations

import asyncio
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from collectors.extraction.live.fetcher import FetchSettings, fetch_page, new_fetch_client

PAGE = b"<html><body><p>An article.</p></body></html>"


class _CookieSite(BaseHTTPRequestHandler):
    """/consent sets a cookie and redirects to /article; /tracker sets one on a 200 page."""

    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, str | None]]  # (path, the Cookie header it was sent with)

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        type(self).seen.append((self.path, self.headers.get("Cookie")))
        if self.path == "/consent":
            self.send_response(302)
            self.send_header("Location", "/article")
            self.send_header("Set-Cookie", "consent=yes; Path=/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        if self.path == "/tracker":
            self.send_header("Set-Cookie", "visitor=v-7; Path=/; Max-Age=3600")
        self.end_headers()
        self.wfile.write(PAGE)


def test_cookies_follow_one_urls_redirects_and_never_reach_another_url():
    handler = type("Handler", (_CookieSite,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    settings = FetchSettings(timeout_s=5.0)

    async def fetch_all():
        async with new_fetch_client(settings) as client:  # one client for every URL
            pages = [
                await fetch_page(
                    client,
                    f"{base}{path}",
                    item_id=path,
                    attempt=1,
                    render_requested="fast",
                    settings=settings,
                )
                for path in ("/tracker", "/consent", "/article")
            ]
            return pages, len(client.cookies)

    try:
        (tracker, consent, article), kept = asyncio.run(fetch_all())
    finally:
        server.shutdown()
        server.server_close()
    assert [p.status_code for p in (tracker, consent, article)] == [200, 200, 200]
    assert "visitor=v-7" in tracker.response_headers["set-cookie"]  # the site did set one
    assert [hop.status_code for hop in consent.redirect_chain] == [302]
    assert handler.seen == [
        ("/tracker", None),
        ("/consent", None),  # the tracker's cookie did not come along
        ("/article", "consent=yes"),  # the consent hop's cookie did, within that one URL
        ("/article", None),  # and is gone for the next URL, the same page fetched on its own
    ]
    assert kept == 0
