"""Loopback fakes of the five extraction vendors, speaking their SDK-checked wire formats.

    with LoopbackSite(...) as site, FakeExtractionVendors(site) as fakes:
        engines = build_live_engines(names, base_urls=fakes.base_urls(), environ=fakes.environ())

Each fake really fetches the URL it is asked about (over HTTP, from the loopback site, redirects
followed), "renders" it when its render route is on (the site's `rendered_html`: what a browser
shows after the page's scripts ran), extracts the text with its own open-source extractor (a
different one per vendor, none of them a default local engine, so agreement between a vendor and
a local engine is agreement between two independent extractors), and answers in the vendor's
shape (see each vendor's `collectors.vendors.<vendor>.extract` for the fields):

| vendor    | path             | renders when                    | extractor        |
|-----------|------------------|---------------------------------|------------------|
| nimble    | /nimble/v2/extract | render true, or "auto" on a JS shell | resiliparse |
| firecrawl | /firecrawl/v2/scrape | always (a browser service)  | beautifulsoup    |
| exa       | /exa/contents    | never                           | inscriptis       |
| tavily    | /tavily/extract  | extract_depth "advanced"        | justext          |
| parallel  | /parallel/v1/extract | never                       | html2text        |

Every request is recorded (path, headers, JSON body) so tests can check what was sent.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import httpx

from collectors.extraction.engines import get_engine
from collectors.extraction.live.loopback_site import JS_MARKER, LoopbackSite

EXTRACTORS = {
    "nimble": "resiliparse",
    "firecrawl": "beautifulsoup",
    "exa": "inscriptis",
    "tavily": "justext",
    "parallel": "html2text",
}
KEYS = {
    "NIMBLE_API_KEY": "nimble-test-key",
    "FIRECRAWL_API_KEY": "fc-test-key",
    "EXA_API_KEY": "exa-test-key",
    "TAVILY_API_KEY": "tvly-test-key",
    "PARALLEL_API_KEY": "parallel-test-key",
}


class _Target:
    """The fake's own fetch of a URL: final status, final URL, redirects, HTML or error."""

    def __init__(self, url: str, render: bool, site: LoopbackSite):
        self.url = url
        self.status: int | None = None
        self.final_url: str | None = None
        self.redirects: list[dict[str, Any]] = []
        self.html: str | None = None
        self.error: str | None = None
        self.rendered = False
        try:
            response = httpx.get(
                url, follow_redirects=True, timeout=10.0, headers={"User-Agent": "fake-vendor"}
            )
        except httpx.TooManyRedirects:
            self.error = "redirect_loop"
            return
        except httpx.TimeoutException:
            self.error = "timeout"
            return
        except httpx.TransportError:
            self.error = "unreachable"
            return
        self.status = response.status_code
        self.final_url = str(response.url)
        self.redirects = [
            {"url": str(r.url), "status_code": r.status_code} for r in response.history
        ]
        self.html = response.text
        if render:
            rendered = site.rendered_html(self.final_url)
            self.rendered = True
            if rendered is not None:
                self.html = rendered

    @property
    def looks_js_only(self) -> bool:
        return self.html is not None and JS_MARKER in self.html


class FakeExtractionVendors:
    def __init__(self, site: LoopbackSite):
        self.site = site
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.port = 0

    def base_urls(self) -> dict[str, str]:
        return {vendor: f"http://127.0.0.1:{self.port}/{vendor}" for vendor in EXTRACTORS}

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @staticmethod
    def environ() -> dict[str, str]:
        return dict(KEYS)

    # --- the vendors ----------------------------------------------------------------------

    def _text(self, vendor: str, target: _Target) -> str | None:
        if target.html is None:
            return None
        text = get_engine(EXTRACTORS[vendor]).extract(target.html, target.final_url)
        return text if isinstance(text, str) else None

    def nimble(self, body: dict[str, Any]) -> dict[str, Any]:
        render = body.get("render")
        target = _Target(body["url"], render is True, self.site)
        if render == "auto" and target.looks_js_only:  # auto: fetch fast, render when it must
            target = _Target(body["url"], True, self.site)
        if target.error:
            return {
                "status": "error",
                "task_id": "t-1",
                "url": body["url"],
                "data": {},
                "metadata": {},
            }
        return {
            "status": "success",
            "task_id": "t-1",
            "url": target.final_url,
            "status_code": target.status,
            "data": {"markdown": self._text("nimble", target), "redirects": target.redirects},
            "metadata": {"driver": "vx8-browser" if target.rendered else "vx6-http"},
        }

    def firecrawl(self, body: dict[str, Any]) -> dict[str, Any]:
        target = _Target(body["url"], True, self.site)
        if target.error:
            return {"success": False, "error": f"SCRAPE_FAILED: {target.error}"}
        return {
            "success": True,
            "data": {
                "markdown": self._text("firecrawl", target) or "",
                "metadata": {
                    "sourceURL": body["url"],
                    "url": target.final_url,
                    "statusCode": target.status,
                    "cacheState": "miss",
                    "creditsUsed": 1,
                },
            },
        }

    def exa(self, body: dict[str, Any]) -> dict[str, Any]:
        results, statuses = [], []
        for url in body["urls"]:
            target = _Target(url, False, self.site)
            if target.error or (target.status or 0) >= 400:
                tag = {
                    "redirect_loop": "CRAWL_REDIRECT_LOOP",
                    "timeout": "CRAWL_LIVECRAWL_TIMEOUT",
                }.get(
                    target.error or "",
                    "CRAWL_NOT_FOUND" if target.status == 404 else "SOURCE_NOT_AVAILABLE",
                )
                statuses.append(
                    {
                        "id": url,
                        "status": "error",
                        "error": {"tag": tag, "httpStatusCode": target.status},
                    }
                )
                continue
            statuses.append({"id": url, "status": "success", "source": "livecrawl"})
            results.append(
                {
                    "id": url,
                    "url": target.final_url,
                    "title": None,
                    "text": self._text("exa", target),
                }
            )
        return {
            "requestId": "r-1",
            "results": results,
            "statuses": statuses,
            "costDollars": {"total": 0.001},
        }

    def tavily(self, body: dict[str, Any]) -> dict[str, Any]:
        advanced = body.get("extract_depth") == "advanced"
        results, failed = [], []
        for url in body["urls"]:
            target = _Target(url, advanced, self.site)
            if target.error or (target.status or 0) >= 400:
                reason = (
                    f"redirect loop at {url}"
                    if target.error == "redirect_loop"
                    else (
                        f"HTTP {target.status}"
                        if target.status
                        else f"failed to fetch: {target.error}"
                    )
                )
                failed.append({"url": url, "error": reason})
                continue
            results.append({"url": url, "raw_content": self._text("tavily", target)})
        return {
            "results": results,
            "failed_results": failed,
            "response_time": 0.1,
            "usage": {"credits": 1},
        }

    def parallel(self, body: dict[str, Any]) -> dict[str, Any]:
        results, errors = [], []
        for url in body["urls"]:
            target = _Target(url, False, self.site)
            if target.error or (target.status or 0) >= 400:
                kind = "redirect_loop" if target.error == "redirect_loop" else "fetch_error"
                errors.append(
                    {
                        "url": url,
                        "error_type": kind,
                        "http_status_code": target.status,
                        "content": None,
                    }
                )
                continue
            text = self._text("parallel", target)
            results.append({"url": url, "title": None, "excerpts": [], "full_content": text})
        return {
            "extract_id": "extract_1",
            "session_id": "s-1",
            "results": results,
            "errors": errors,
        }

    ROUTES: ClassVar[dict[str, tuple[str, str, str]]] = {
        "/nimble/v2/extract": ("nimble", "authorization", "Bearer nimble-test-key"),
        "/firecrawl/v2/scrape": ("firecrawl", "authorization", "Bearer fc-test-key"),
        # firecrawl-py joins "/v2/scrape" to the host and drops a base URL's path: served at the
        # root too, so the SDK itself can be pointed at this fake (`root_url`).
        "/v2/scrape": ("firecrawl", "authorization", "Bearer fc-test-key"),
        "/exa/contents": ("exa", "x-api-key", "exa-test-key"),
        "/tavily/extract": ("tavily", "authorization", "Bearer tvly-test-key"),
        "/parallel/v1/extract": ("parallel", "x-api-key", "parallel-test-key"),
    }

    # --- serving --------------------------------------------------------------------------

    def __enter__(self) -> FakeExtractionVendors:
        fakes = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # keep-alive writes must not wait for delayed ACKs

            def log_message(self, *args: object) -> None:
                pass

            def reply(self, status: int, document: Any) -> None:
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("x-request-id", "req-fake")
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                route = fakes.ROUTES.get(self.path)
                with fakes._lock:
                    fakes.requests.append(
                        {
                            "path": self.path,
                            "headers": dict(self.headers),
                            "body": json.loads(raw or b"null"),
                        }
                    )
                if route is None:
                    return self.reply(404, {"error": "not found"})
                vendor, header, expected = route
                if self.headers.get(header) != expected:
                    return self.reply(401, {"error": "invalid api key"})
                self.reply(200, getattr(fakes, vendor)(json.loads(raw)))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
