"""The `httpx.Request` for a `ProviderRequest`, and its redacted `RecordedRequest`, per channel.

`build` returns what `client.build_request(method, url, params=, headers=, json=, timeout=)`
returns (same URL, header fields in the same order, body bytes and timeout; the unit tests
compare the two for every lane) without re-parsing the lane's fixed URL and re-merging its fixed
headers on every call: httpx does that in pure Python at ~100 µs a request, a tenth of the whole
per-call budget. A client with a base URL, default params or cookies goes through
`client.build_request` itself.

`record` memoises the redaction of what repeats from call to call (the URL of a POST lane, the
header fields); the body is redacted every time.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from collectors.http.model import ProviderRequest
from collectors.http.redaction import Redactor
from warehouse.events import RecordedRequest

_MAX_CACHED = 1024


class _MergedHeaders:
    """The client's default headers updated with one lane's headers, as raw pairs."""

    __slots__ = ("has_content_length", "has_content_type", "has_host", "raw")

    def __init__(self, client_headers: httpx.Headers, lane_headers):
        merged = httpx.Headers(client_headers)
        merged.update(lane_headers)
        self.raw = merged.raw
        self.has_host = "host" in merged
        self.has_content_length = "content-length" in merged or "transfer-encoding" in merged
        self.has_content_type = "content-type" in merged


class RequestBuilder:
    def __init__(self, client: httpx.AsyncClient, timeout: httpx.Timeout, redactor: Redactor):
        self._client = client
        self._redactor = redactor
        # A base URL or default params change every URL: then the client merges.
        self._client_adds_more = bool(str(client.base_url)) or bool(client.params)
        self._timeout = timeout
        self._timeout_dict = timeout.as_dict()
        self._urls: dict[str, httpx.URL] = {}
        self._headers: dict[tuple[tuple[str, str], ...], _MergedHeaders] = {}
        self._recorded_urls: dict[str, str] = {}
        self._recorded_headers: dict[tuple[tuple[bytes, bytes], ...], dict[str, str]] = {}

    def build(self, request: ProviderRequest) -> httpx.Request:
        client = self._client
        if self._client_adds_more or client.cookies:
            return client.build_request(
                request.method,
                request.url,
                params=request.params,
                headers=request.headers,
                json=request.json_body,
                timeout=self._timeout,
            )
        url = self._urls.get(request.url)
        if url is None:
            url = httpx.URL(request.url)
            _remember(self._urls, request.url, url)
        if request.params is not None:
            url = httpx.URL(url, params=request.params)  # as httpx.Request does it
        header_key = tuple(request.headers.items())
        merged = self._headers.get(header_key)
        if merged is None:
            merged = _MergedHeaders(client.headers, request.headers)
            _remember(self._headers, header_key, merged)

        # What httpx.Request(..., json=...) adds: Host first, then Content-Length and
        # Content-Type for a JSON body, or Content-Length 0 for a body-less POST/PUT/PATCH.
        raw = merged.raw if merged.has_host else [(b"Host", url.netloc), *merged.raw]
        method = request.method.upper()
        if request.json_body is not None:
            body = json.dumps(
                request.json_body, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            ).encode("utf-8")
            extra = []
            if not merged.has_content_length:
                extra.append((b"Content-Length", str(len(body)).encode("ascii")))
            if not merged.has_content_type:
                extra.append((b"Content-Type", b"application/json"))
            raw = [*raw, *extra] if extra else raw
        else:
            body = b""
            if not merged.has_content_length and method in ("POST", "PUT", "PATCH"):
                raw = [*raw, (b"Content-Length", b"0")]
        http_request = httpx.Request(
            method,
            url,
            headers=raw,
            stream=httpx.ByteStream(body),
            extensions={"timeout": self._timeout_dict},
        )
        http_request.read()  # the body is in memory: make `.content` available
        return http_request

    def record(self, http_request: httpx.Request, json_body: Any) -> RecordedRequest:
        """`Redactor.request(...)` for this request, with the repeating parts memoised."""
        redactor = self._redactor
        url = str(http_request.url)
        recorded_url = self._recorded_urls.get(url)
        if recorded_url is None:
            recorded_url = redactor.url(url)
            if not http_request.url.query:  # a query (GET lanes) differs on every call
                _remember(self._recorded_urls, url, recorded_url)
        header_key = tuple(http_request.headers.raw)
        headers = self._recorded_headers.get(header_key)
        if headers is None:
            headers = redactor.headers(http_request.headers)
            _remember(self._recorded_headers, header_key, headers)
        return RecordedRequest(
            method=http_request.method.upper(),
            url=recorded_url,
            headers=headers,  # validated into a fresh dict: the cached one is never shared
            body=redactor.value(json_body),
        )


def _remember(cache: dict, key, value) -> None:
    if len(cache) < _MAX_CACHED:
        cache[key] = value
