"""A loopback website for the live-URL extraction benchmark (tests and `bench demo`).

    with LoopbackSite(benchmark_dir, articles=8) as site:
        site.write_corpus(tmp / "urls.csv")        # url,vertical,render
        site.expected_hygiene()                    # what dbt must exclude, and why

It serves pages of the article-extraction-benchmark (the stored HTML, byte for byte) under the
paths of their original URLs (`/<host>/<path>`), each with a vertical from its publisher, plus
one page for every path a live fetch can take:

| kind            | what is served                                      | expected        |
|-----------------|-----------------------------------------------------|-----------------|
| article         | a benchmark page, 200                               | scored          |
| redirect_chain  | 301 -> 302 -> 307 -> an article at another path     | scored          |
| js_only         | a shell; the article exists only as data a script renders | scored (render route) |
| slow            | an article after `slow_s` seconds                   | scored          |
| huge            | an article + ~`huge_bytes` of inline JSON state     | scored          |
| non_utf8        | an article encoded windows-1252 (header + <meta>)   | scored          |
| anti_bot        | a browser-check screen, 200                         | scored (non-content) |
| cookie_wall     | a cookie-consent wall, 200                          | scored (non-content) |
| not_found       | 404                                                 | dead            |
| dead_host       | a port nothing listens on (connection refused)      | dead            |
| origin_5xx      | 503                                                 | origin_5xx      |
| redirect_loop   | /loop/a -> /loop/b -> /loop/a                       | redirect_only   |

`rendered_html(url)` is what a browser would show after the page's scripts ran (the JS-only
page with its article inlined; every other page as served): what the vendor fakes "render".
"""

from __future__ import annotations

import csv
import gzip
import html
import json
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

VERTICAL_BY_HOST = {
    "tech": (
        "venturebeat",
        "slashgear",
        "theverge",
        "engadget",
        "techcrunch",
        "wired",
        "cnet",
        "arstechnica",
        "zdnet",
        "gizmodo",
        "techradar",
        "mashable",
        "digitaltrends",
        "androidcentral",
        "9to5",
    ),
    "business": (
        "wsj",
        "bloomberg",
        "cnbc",
        "marketwatch",
        "reuters",
        "ft.com",
        "forbes",
        "fool.com",
        "businessinsider",
        "fortune",
        "economist",
        "barrons",
        "investopedia",
    ),
}
JS_MARKER = '<div id="app">Loading…</div>'
ANTI_BOT = (
    "<!doctype html><html><head><title>Just a moment...</title></head><body>"
    "<h1>Checking your browser before accessing the site.</h1>"
    "<p>Please enable JavaScript and cookies to continue.</p><p>Ray ID: 7f3a9c</p></body></html>"
)
COOKIE_WALL = (
    "<!doctype html><html><head><title>Before you continue</title></head><body>"
    "<h1>We value your privacy</h1><p>We and our partners use cookies to store and access "
    "information on your device. Accept all cookies to continue to the site, or manage your "
    "preferences.</p><button>Accept all cookies</button><button>Manage preferences</button></body></html>"
)
NOT_FOUND = "<!doctype html><html><head><title>404</title></head><body><h1>Page not found</h1></body></html>"
UNAVAILABLE = "<!doctype html><html><body><h1>503 Service Unavailable</h1></body></html>"


def vertical_for(host: str) -> str:
    for vertical, needles in VERTICAL_BY_HOST.items():
        if any(needle in host for needle in needles):
            return vertical
    return "news"


@dataclass(frozen=True)
class SitePage:
    path: str
    kind: str
    vertical: str
    expected: str  # scored | dead | origin_5xx | redirect_only
    item_id: str | None = None  # the benchmark page it serves
    render: str | None = None  # the render column written to the corpus file


class LoopbackSite:
    def __init__(
        self,
        benchmark_dir: Path,
        *,
        articles: int = 8,
        slow_s: float = 1.0,
        huge_bytes: int = 2_500_000,
        port: int = 0,
    ):
        self.benchmark_dir = Path(benchmark_dir)
        self.slow_s = slow_s
        self.huge_bytes = huge_bytes
        truth = json.loads((self.benchmark_dir / "ground-truth.json").read_text("utf-8"))
        ids = sorted(truth)
        need = articles + 6  # articles + the pages redirect/js/slow/huge/non-utf8 serve
        if len(ids) < need:
            raise ValueError(f"{self.benchmark_dir}: needs {need} pages, has {len(ids)}")
        self.truth = {item_id: truth[item_id] for item_id in ids[:need]}
        self._html: dict[str, bytes] = {}
        self.pages: list[SitePage] = []
        extra = iter(ids[articles:need])
        for item_id in ids[:articles]:
            parts = urlsplit(truth[item_id]["url"])
            path = f"/{parts.netloc}{parts.path or '/'}"
            self.pages.append(
                SitePage(path, "article", vertical_for(parts.netloc), "scored", item_id)
            )
        for kind, path, vertical in (
            ("redirect_chain", "/go/r1", "news"),
            ("js_only", "/app/story", "tech"),
            ("slow", "/slow/story", "news"),
            ("huge", "/huge/story", "business"),
            ("non_utf8", "/latin1/story", "news"),
        ):
            self.pages.append(SitePage(path, kind, vertical, "scored", next(extra)))
        self.pages += [
            SitePage("/shop/protected", "anti_bot", "commerce", "scored"),
            SitePage("/news/consent", "cookie_wall", "news", "scored"),
            SitePage("/gone/story", "not_found", "news", "dead"),
            SitePage("/dead/story", "dead_host", "news", "dead"),
            SitePage("/origin/story", "origin_5xx", "business", "origin_5xx"),
            SitePage("/loop/a", "redirect_loop", "news", "redirect_only"),
        ]
        self.by_path = {page.path: page for page in self.pages}
        self._server: ThreadingHTTPServer | None = None
        self.wanted_port = port  # 0: any free port; else this one, or any if it is taken
        self.port = 0
        self.dead_port = 0

    # --- content ------------------------------------------------------------------------------

    def article_html(self, item_id: str) -> bytes:
        if item_id not in self._html:
            self._html[item_id] = gzip.decompress(
                (self.benchmark_dir / "html" / f"{item_id}.html.gz").read_bytes()
            )
        return self._html[item_id]

    def js_shell(self, item_id: str) -> str:
        body = self.truth[item_id]["articleBody"] or ""
        data = json.dumps({"paragraphs": [p for p in body.split("\n") if p.strip()]})
        return (
            "<!doctype html><html><head><meta charset='utf-8'><title>Story</title></head><body>"
            f'{JS_MARKER}<script id="__DATA__" type="application/json">{html.escape(data, quote=False)}</script>'
            "<script>const d=JSON.parse(document.getElementById('__DATA__').textContent);"
            "document.getElementById('app').innerHTML='<article>'+d.paragraphs.map(p=>'<p>'+p+'</p>').join('')"
            "+'</article>';</script></body></html>"
        )

    def js_rendered(self, item_id: str) -> str:
        body = self.truth[item_id]["articleBody"] or ""
        paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in body.split("\n") if p.strip())
        return (
            "<!doctype html><html><head><meta charset='utf-8'><title>Story</title></head><body>"
            f'<div id="app"><article>{paragraphs}</article></div></body></html>'
        )

    def huge_html(self, item_id: str) -> bytes:
        """The article with ~huge_bytes of inline application state (a framework's hydration
        blob, the usual reason a real page weighs megabytes) before </body>."""
        page = self.article_html(item_id)
        record = (
            b'{"id":12345,"sku":"A-000","tags":["promo","sidebar"],"html":"\\u003cdiv\\u003e"},'
        )
        blob = (
            b'<script id="__STATE__" type="application/json">['
            + record * max(1, (self.huge_bytes - len(page)) // len(record))
            + b"{}]</script>"
        )
        return page.replace(b"</body>", blob + b"</body>", 1) if b"</body>" in page else page + blob

    def latin1_html(self, item_id: str) -> bytes:
        text = self.article_html(item_id).decode("utf-8", errors="replace")
        text = text.replace("charset=utf-8", "charset=windows-1252").replace(
            'charset="utf-8"', 'charset="windows-1252"'
        )
        if "windows-1252" not in text:
            text = text.replace("<head>", '<head><meta charset="windows-1252">', 1)
        return text.encode("cp1252", errors="xmlcharrefreplace")

    def rendered_html(self, url: str) -> str | None:
        """The page after its scripts ran, for a renderer; None when the URL serves no page."""
        page = self.by_path.get(urlsplit(url).path)
        if page is None:
            return None
        if page.kind == "js_only":
            return self.js_rendered(page.item_id)
        return None  # everything else renders as served

    # --- the corpus ---------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, page: SitePage) -> str:
        if page.kind == "dead_host":
            return f"http://127.0.0.1:{self.dead_port}{page.path}"
        return f"{self.base_url}{page.path}"

    def write_corpus(self, path: Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["url", "vertical", "render"])
            for page in self.pages:
                writer.writerow([self.url(page), page.vertical, page.render or ""])
        return path

    def expected_hygiene(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {"dead": [], "origin_5xx": [], "redirect_only": []}
        for page in self.pages:
            if page.expected in out:
                out[page.expected].append(self.url(page))
        return {reason: sorted(urls) for reason, urls in out.items()}

    def page_for(self, url: str) -> SitePage | None:
        return self.by_path.get(urlsplit(url).path)

    # --- serving ------------------------------------------------------------------------------

    def respond(self, path: str) -> tuple[int, dict[str, str], bytes]:
        html_type = {"Content-Type": "text/html; charset=utf-8"}
        if path == "/loop/b":
            return 302, {"Location": "/loop/a"}, b""
        if path in ("/go/r2", "/go/r3"):
            nxt = {"/go/r2": (302, "/go/r3"), "/go/r3": (307, "/amp/story")}[path]
            return nxt[0], {"Location": nxt[1]}, b""
        if path == "/amp/story":
            return 200, html_type, self.article_html(self.by_path["/go/r1"].item_id)
        page = self.by_path.get(path)
        if page is None or page.kind == "not_found":
            return 404, html_type, NOT_FOUND.encode()
        kind = page.kind
        if kind == "redirect_chain":
            return 301, {"Location": "/go/r2"}, b""
        if kind == "redirect_loop":
            return 302, {"Location": "/loop/b"}, b""
        if kind == "origin_5xx":
            return 503, html_type, UNAVAILABLE.encode()
        if kind == "anti_bot":
            return 200, html_type, ANTI_BOT.encode()
        if kind == "cookie_wall":
            return 200, html_type, COOKIE_WALL.encode()
        if kind == "js_only":
            return 200, html_type, self.js_shell(page.item_id).encode()
        if kind == "slow":
            time.sleep(self.slow_s)
            return 200, html_type, self.article_html(page.item_id)
        if kind == "huge":
            return 200, html_type, self.huge_html(page.item_id)
        if kind == "non_utf8":
            return (
                200,
                {"Content-Type": "text/html; charset=windows-1252"},
                self.latin1_html(page.item_id),
            )
        return 200, html_type, self.article_html(page.item_id)

    def __enter__(self) -> LoopbackSite:
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # keep-alive writes must not wait for delayed ACKs

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                status, headers, body = site.respond(urlsplit(self.path).path)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        try:
            self._server = ThreadingHTTPServer(("127.0.0.1", self.wanted_port), Handler)
        except OSError:
            self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.dead_port = self._closed_port(self.port + 1 if self.wanted_port else 0)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    @staticmethod
    def _closed_port(preferred: int) -> int:
        """A port nothing listens on (connection refused): `preferred` when it is free."""
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", preferred))
            except OSError:
                probe.bind(("127.0.0.1", 0))
            return probe.getsockname()[1]

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
