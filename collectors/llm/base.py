"""The one protocol every LLM backend implements, and the error it raises.

`complete()` sends one conversation and returns an `LlmCallRecord`: model id, sampling
params, prompt id + sha256, usage, raw completion, vendor request id and latency. Keys come
from the environment and never enter a record. Retries are the SDK's own, bounded by
`max_retries` (never wrapped twice). `stored_texts` are texts the log already holds once (a
DRACO judge's judged report): the recorded request references them instead of copying them
(`warehouse.bodies`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from collectors.http.redaction import Redactor
from warehouse.bodies import reference_texts
from warehouse.canonical import sha256_hex
from warehouse.events import LlmCallRecord, RecordedRequest

Messages = Sequence[dict[str, str]]

DEFAULT_MAX_RETRIES = 2
DEFAULT_TIMEOUT_S = 120.0
MAX_RAW_ERROR_CHARS = 4_000
AUTH_STATUSES = frozenset({401, 402, 403})


@dataclass(frozen=True)
class PromptRef:
    """Which versioned prompt a call was rendered from (not the rendered text)."""

    prompt_id: str
    sha256: str


class LlmConfigError(ValueError):
    """The backend cannot be used as configured (missing key, unknown provider)."""


@dataclass
class LlmCallError(Exception):
    """A call that produced no completion after the SDK's bounded retries."""

    message: str
    provider: str
    model: str
    error_class: str  # timeout | connection | http_status | auth | malformed_body
    status_code: int | None = None
    raw_body: str | None = None
    vendor_request_id: str | None = None
    latency_ms: float | None = None
    request: dict[str, Any] = field(default_factory=dict)  # method, url, body (no secrets)

    def __str__(self) -> str:
        status = f" (HTTP {self.status_code})" if self.status_code else ""
        return f"{self.provider}:{self.model}{status}: {self.message}"

    @property
    def landed(self) -> bool:
        """The provider answered this request (4xx: a rejection); a 5xx after retries, like a
        timeout, counts as never landed (methodology 2.3)."""
        return self.status_code is not None and self.status_code < 500

    @property
    def is_auth(self) -> bool:
        return self.status_code in AUTH_STATUSES


@runtime_checkable
class LlmClient(Protocol):
    provider: str  # anthropic | openai | openai-compatible | offline
    base_url: str | None

    def complete(
        self,
        messages: Messages | str,
        *,
        prompt: PromptRef,
        model: str,
        temperature: float | None,
        max_tokens: int,
        system: str | None = None,
        stored_texts: Sequence[str] = (),
    ) -> LlmCallRecord: ...


def as_messages(messages: Messages | str) -> list[dict[str, str]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return [dict(message) for message in messages]


def api_key_from_env(variable: str, *, required: bool = True) -> str | None:
    key = os.environ.get(variable)
    if not key and required:
        raise LlmConfigError(
            f"{variable} is not set; export it (keys are read from the environment only)"
        )
    return key or None


def truncate(text: str | None, limit: int = MAX_RAW_ERROR_CHARS) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [truncated, {len(text)} chars]"


def redacted(text: str | None, secrets: Iterable[str | None]) -> str | None:
    """`text` (a vendor's error body, an SDK's message quoting it) with the backend's key
    removed, as the success path's `recorded_exchange` removes it: vendors echo keys back."""
    if text is None:
        return None
    return Redactor(s for s in secrets if s).text(text)


def recorded_exchange(
    http_request: Any,
    response_text: str,
    secrets: Iterable[str | None],
    stored_texts: Sequence[str] = (),
) -> tuple[RecordedRequest, str]:
    """The SDK's own request (an httpx/httpx2 Request: what went on the wire) and the response
    body, with the backend's key and every auth header redacted.

    When the body holds one of `stored_texts`, it is recorded as the text sent with that text
    referenced, not copied, plus the sha256 of the bytes sent (`warehouse.bodies`)."""
    redactor = Redactor(s for s in secrets if s)
    content = http_request.content
    try:
        body: Any = json.loads(content) if content else None
    except ValueError:
        body = content.decode("utf-8", errors="replace")
    recorded = redactor.request(
        http_request.method, str(http_request.url), http_request.headers, body
    )
    referenced = (
        reference_texts(redactor.text(content.decode("utf-8", errors="replace")), stored_texts)
        if stored_texts and content
        else None
    )
    if referenced is not None:
        text, refs = referenced
        recorded = RecordedRequest(
            method=recorded.method,
            url=recorded.url,
            headers=recorded.headers,
            body=text,
            body_sha256=sha256_hex(content),
            body_refs=refs,
        )
    return recorded, redactor.text(response_text)


def sent_request(exc: Exception, secrets: Iterable[str | None], fallback: dict) -> dict[str, Any]:
    """A failed SDK call's request as the SDK sent it (method, url, headers, body; redacted),
    or `fallback` (what we asked the SDK to send) when the error carries no request."""
    http_request = getattr(exc, "request", None)
    if http_request is None or not hasattr(http_request, "content"):
        return fallback
    recorded, _ = recorded_exchange(http_request, "", secrets)
    return recorded.model_dump(mode="json")


def sdk_call_error(
    exc: Exception,
    *,
    provider: str,
    model: str,
    secrets: Sequence[str | None],
    fallback_request: dict,
    latency_ms: float,
    status_error: type[Exception],
    timeout_error: type[Exception],
    request_id_header: str,
) -> LlmCallError:
    """A failed SDK call as an `LlmCallError`. The Anthropic and OpenAI SDKs raise the same
    shapes (a status error carrying the response; a connection error, of which a timeout is
    one); each backend names its SDK's classes and its request-id header."""
    request = sent_request(exc, secrets, fallback_request)
    if isinstance(exc, status_error):
        status = exc.status_code  # type: ignore[attr-defined]
        response = exc.response  # type: ignore[attr-defined]
        return LlmCallError(
            message=redacted(str(exc), secrets),
            provider=provider,
            model=model,
            error_class="auth" if status in AUTH_STATUSES else "http_status",
            status_code=status,
            raw_body=truncate(redacted(response.text, secrets)),
            vendor_request_id=response.headers.get(request_id_header),
            latency_ms=latency_ms,
            request=request,
        )
    return LlmCallError(
        message=redacted(str(exc), secrets) or type(exc).__name__,
        provider=provider,
        model=model,
        error_class="timeout" if isinstance(exc, timeout_error) else "connection",
        latency_ms=latency_ms,
        request=request,
    )
