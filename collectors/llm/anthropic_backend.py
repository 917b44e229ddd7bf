"""Anthropic Messages API through the official SDK (built on httpx2, which it requires).

The API version is pinned to 2023-06-01: the SDK's own default (2026-10-21) removes
`temperature`, and a judge's sampling must be controlled and recorded. For the same reason
`temperature` goes in the body explicitly (`extra_body`), which this SDK no longer types, and
the key goes in the documented `x-api-key` header (the SDK defaults to a Bearer token).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import anthropic
import httpx2

from collectors.http.vendor_truth import SdkCheck
from collectors.llm.base import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
    LlmCallError,
    Messages,
    PromptRef,
    api_key_from_env,
    as_messages,
    recorded_exchange,
    sdk_call_error,
)
from warehouse.events import LlmCallRecord

API_KEY_ENV = "ANTHROPIC_API_KEY"
SDK_CHECK = SdkCheck(
    package="anthropic",
    version="2.14.0",
    docs="https://docs.anthropic.com/en/api/messages",
    checked_on="2026-12-01",
)
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


class AnthropicBackend:
    provider = "anthropic"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        http_client: httpx2.Client | None = None,
    ):
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.max_retries = max_retries
        key = api_key_from_env(API_KEY_ENV)
        self._secrets = (key,)
        self._client = anthropic.Anthropic(
            api_key=key,
            base_url=self.base_url,
            max_retries=max_retries,
            timeout=timeout_s,
            # The documented auth for API keys at this version is `x-api-key`; this SDK would
            # send the key as a Bearer token instead.
            default_headers={
                "anthropic-version": API_VERSION,
                "x-api-key": key,
                "Authorization": anthropic.omit,
            },
            http_client=http_client or httpx2.Client(timeout=timeout_s),
        )

    def settings(self) -> dict[str, object]:
        return {
            "api_version": API_VERSION,
            "base_url": self.base_url,
            "max_retries": self.max_retries,
        }

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
    ) -> LlmCallRecord:
        body: dict[str, object] = {
            "model": model,
            "max_tokens": max_tokens,
            "messages": as_messages(messages),
        }
        if system:
            body["system"] = system
        extra = {"temperature": temperature} if temperature is not None else None
        started = time.perf_counter()
        try:
            raw = self._client.messages.with_raw_response.create(**body, extra_body=extra)  # type: ignore[arg-type]
            message = raw.parse()
        except anthropic.APIStatusError as exc:
            raise self._error(exc, model, body, temperature, started) from None
        except anthropic.APIConnectionError as exc:
            raise self._error(exc, model, body, temperature, started) from None
        latency_ms = (time.perf_counter() - started) * 1000
        sent, raw_body = recorded_exchange(
            raw.http_request, raw.http_response.text, self._secrets, stored_texts
        )
        text = "".join(
            block.text for block in message.content if getattr(block, "type", "") == "text"
        )
        usage = message.usage
        return LlmCallRecord(
            provider=self.provider,
            model=message.model or model,
            base_url=self.base_url,
            temperature=temperature,
            max_tokens=max_tokens,
            prompt_id=prompt.prompt_id,
            prompt_sha256=prompt.sha256,
            raw_completion=text,
            input_tokens=getattr(usage, "input_tokens", None),
            output_tokens=getattr(usage, "output_tokens", None),
            vendor_request_id=message._request_id or message.id,
            latency_ms=latency_ms,
            request=sent,
            raw_body=raw_body,
        )

    def _error(
        self, exc: Exception, model: str, body: dict, temperature: float | None, started: float
    ) -> LlmCallError:
        latency_ms = (time.perf_counter() - started) * 1000
        request = {
            "method": "POST",
            "url": f"{self.base_url}/v1/messages",
            "body": {**body, **({"temperature": temperature} if temperature is not None else {})},
        }
        return sdk_call_error(
            exc,
            provider=self.provider,
            model=model,
            secrets=self._secrets,
            fallback_request=request,
            latency_ms=latency_ms,
            status_error=anthropic.APIStatusError,
            timeout_error=anthropic.APITimeoutError,
            request_id_header="request-id",
        )
