"""The local fetcher: one GET per URL with httpx, redirects followed and every hop recorded.

What it records (`page_fetched`): the final status, final URL, the redirect chain (each hop's
URL, status and Location), the response headers of interest, the bytes received, the body
decoded with the charset the response declares (header, then <meta charset>, else UTF-8 with
replacement), and the elapsed time. A connection refused, a timeout or a redirect loop is a
fetch with no status and an `error_class`; it is a fact to record, never an exception.

Bodies are read up to `max_bytes` (default 8 MB): a larger page is cut there and flagged
`body_truncated`, so a huge page cannot exhaust memory. The fetcher never runs JavaScript:
`render_used` is always "fast" (the render route belongs to engines that render).

Cookies are scoped to one URL's fetch: a Set-Cookie on a hop of its redirect chain is sent on
the later hops of that chain (as a browser would: consent and session redirects need it), and
dropped when the fetch ends. The client itself keeps none (`refusing_cookie_jar`), so a page's
cookies never shape the fetch of another page of the benchmark, even on a shared client.
"""

from __future__ import annotations

import re
import time
from contextlib import aclosing
from dataclasses import dataclass

import httpx

from collectors.http.client import refusing_cookie_jar, shared_tls_context
from collectors.runs.messages import truncate_message
from warehouse.canonical import sha256_hex
from warehouse.events import PageFetched, RedirectHop

MAX_BYTES = 8 * 1024 * 1024
MAX_REDIRECTS = 10
USER_AGENT = "bench-warehouse-live-extraction/1 (+https://github.com/)"
KEPT_HEADERS = (
    "content-type",
    "content-length",
    "content-encoding",
    "server",
    "location",
    "retry-after",
    "set-cookie",
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_\-:.]+)""", re.IGNORECASE)


@dataclass(frozen=True)
class FetchSettings:
    timeout_s: float = 20.0
    connect_timeout_s: float = 5.0
    max_bytes: int = MAX_BYTES
    max_redirects: int = MAX_REDIRECTS

    def as_dict(self) -> dict[str, float | int]:
        return {
            "timeout_s": self.timeout_s,
            "connect_timeout_s": self.connect_timeout_s,
            "max_bytes": self.max_bytes,
            "max_redirects": self.max_redirects,
            "user_agent": USER_AGENT,
        }


def new_fetch_client(settings: FetchSettings) -> httpx.AsyncClient:
    # Redirects are followed by hand (below) so every hop is recorded, loops included.
    return httpx.AsyncClient(
        verify=shared_tls_context(),
        follow_redirects=False,
        cookies=refusing_cookie_jar(),
        timeout=httpx.Timeout(settings.timeout_s, connect=settings.connect_timeout_s),
        headers={"User-Agent": USER_AGENT, "Accept": "text/html,application/xhtml+xml,*/*;q=0.8"},
    )


def decode_body(body: bytes, content_type: str | None) -> tuple[str, str]:
    """(text, encoding used): the declared charset (header, then <meta>), else UTF-8."""
    candidates = []
    if content_type and "charset=" in content_type.lower():
        candidates.append(content_type.lower().split("charset=", 1)[1].split(";")[0].strip(" \"'"))
    meta = _META_CHARSET.search(body[:4096])
    if meta:
        candidates.append(meta.group(1).decode("ascii", "replace").lower())
    for encoding in candidates:
        try:
            return body.decode(encoding), encoding
        except (LookupError, UnicodeDecodeError):
            continue
    return body.decode("utf-8", errors="replace"), "utf-8"


async def _read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    chunks, size = [], 0
    async for chunk in response.aiter_raw():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False


async def fetch_page(
    client: httpx.AsyncClient,
    url: str,
    *,
    item_id: str,
    attempt: int,
    render_requested: str,
    settings: FetchSettings,
) -> PageFetched:
    started = time.perf_counter()
    chain: list[RedirectHop] = []
    seen = {url}
    current = url
    cookies = httpx.Cookies()  # this URL's cookies only (see the module docstring)

    def done(**fields) -> PageFetched:
        return PageFetched(
            item_id=item_id,
            attempt=attempt,
            url=url,
            redirect_chain=chain,
            render_requested=render_requested,
            elapsed_ms=(time.perf_counter() - started) * 1000,
            **fields,
        )

    try:
        while True:
            request = client.build_request("GET", current)
            cookies.set_cookie_header(request)
            async with aclosing(await client.send(request, stream=True)) as response:
                cookies.extract_cookies(response)
                if response.is_redirect and "location" in response.headers:
                    location = response.headers["location"]
                    chain.append(
                        RedirectHop(
                            url=current, status_code=response.status_code, location=location
                        )
                    )
                    current = str(response.url.join(location))
                    if current in seen:
                        return done(
                            final_url=current,
                            error_class="redirect_loop",
                            error_message=f"redirect loop back to {current} after {len(chain)} hop(s)",
                        )
                    if len(chain) >= settings.max_redirects:
                        return done(
                            final_url=current,
                            error_class="too_many_redirects",
                            error_message=f"more than {settings.max_redirects} redirects",
                        )
                    seen.add(current)
                    continue
                body, truncated = await _read_capped(response, settings.max_bytes)
                content_type = response.headers.get("content-type")
                text, encoding = decode_body(body, content_type)
                return done(
                    final_url=str(response.url),
                    status_code=response.status_code,
                    response_headers={
                        k: v for k, v in response.headers.items() if k.lower() in KEPT_HEADERS
                    },
                    body=text,
                    body_bytes=len(body),
                    body_sha256=sha256_hex(body),
                    body_truncated=truncated,
                    encoding=encoding,
                )
    except httpx.TimeoutException as exc:
        return done(
            final_url=current,
            error_class="timeout",
            error_message=truncate_message(f"{type(exc).__name__}: {exc}"),
        )
    except httpx.TransportError as exc:
        return done(
            final_url=current,
            error_class="connection",
            error_message=truncate_message(f"{type(exc).__name__}: {exc}"),
        )
