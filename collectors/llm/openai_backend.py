"""OpenAI Chat Completions through the official SDK, and any OpenAI-compatible server.

One module for both: vLLM, Ollama and llama.cpp speak the same `/chat/completions` shape at
another base URL. The provider label keeps the two apart in every record ("openai" vs
"openai-compatible"), and the base URL is recorded with each call.

Token limit and temperature (openai SDK 3.57.0, `chat.completions.create` docstrings, checked
2026-12-01): `max_tokens` "is now deprecated in favor of `max_completion_tokens`, and is not
compatible with o-series models"; gpt-5.x and o-series models answer 400 `unsupported_parameter`
to it, and 400 `unsupported_value` to any temperature but the default 1. So OpenAI itself gets
`max_completion_tokens` for every model, and reasoning models get no temperature unless it is 1
(the record says what was sent). OpenAI-compatible local servers keep `max_tokens`, the field
they all read.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

import httpx2
import openai

from collectors.http.vendor_truth import SdkCheck
from collectors.llm.base import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
    LlmCallError,
    LlmConfigError,
    Messages,
    PromptRef,
    api_key_from_env,
    as_messages,
    recorded_exchange,
    sdk_call_error,
    truncate,
)
from warehouse.events import LlmCallRecord

OPENAI_KEY_ENV = "OPENAI_API_KEY"
SDK_CHECK = SdkCheck(
    package="openai",
    version="3.57.0",
    docs="https://platform.openai.com/docs/api-reference/chat/create",
    checked_on="2026-12-01",
)
COMPATIBLE_KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers (Ollama, llama.cpp) accept any key; the SDK insists on one.
LOCAL_SERVER_PLACEHOLDER_KEY = "unused-by-local-server"
# gpt-5, gpt-5.1, gpt-5-mini, o1, o3-mini, o4-mini... (an "openai/" router prefix allowed).
_REASONING_MODEL = re.compile(r"^(?:openai/)?(?:o\d|gpt-5)", re.IGNORECASE)


def is_reasoning_model(model: str) -> bool:
    """A model that accepts only the default temperature (1)."""
    return bool(_REASONING_MODEL.match(model))


def sampling_parameters(
    provider: str, model: str, temperature: float | None, max_tokens: int
) -> dict[str, object]:
    """The token-limit and temperature fields of the request body, as the model accepts them."""
    if provider != "openai":
        params: dict[str, object] = {"max_tokens": max_tokens}
        if temperature is not None:
            params["temperature"] = temperature
        return params
    params = {"max_completion_tokens": max_tokens}
    if temperature is not None and (not is_reasoning_model(model) or temperature == 1):
        params["temperature"] = temperature
    return params


class OpenAIBackend:
    def __init__(
        self,
        *,
        provider: str = "openai",
        base_url: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        http_client: httpx2.Client | None = None,
    ):
        if provider not in ("openai", "openai-compatible"):
            raise LlmConfigError(f"provider {provider!r}: expected 'openai' or 'openai-compatible'")
        if provider == "openai-compatible" and not base_url:
            raise LlmConfigError(
                "an openai-compatible backend needs a base URL (e.g. http://127.0.0.1:11434/v1)"
            )
        self.provider = provider
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.max_retries = max_retries
        if provider == "openai":
            key = api_key_from_env(OPENAI_KEY_ENV)
        else:
            key = (
                api_key_from_env(COMPATIBLE_KEY_ENV, required=False) or LOCAL_SERVER_PLACEHOLDER_KEY
            )
        self._secrets = (key,)
        self._client = openai.OpenAI(
            api_key=key,
            base_url=self.base_url,
            max_retries=max_retries,
            timeout=timeout_s,
            http_client=http_client or httpx2.Client(timeout=timeout_s),
        )

    def settings(self) -> dict[str, object]:
        return {"base_url": self.base_url, "max_retries": self.max_retries}

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
        conversation = as_messages(messages)
        if system:
            conversation = [{"role": "system", "content": system}, *conversation]
        body: dict[str, object] = {
            "model": model,
            "messages": conversation,
            **sampling_parameters(self.provider, model, temperature, max_tokens),
        }
        started = time.perf_counter()
        try:
            raw = self._client.chat.completions.with_raw_response.create(**body)  # type: ignore[arg-type]
            completion = raw.parse()
        except (openai.APIStatusError, openai.APIConnectionError) as exc:
            raise self._error(exc, model, body, started) from None
        latency_ms = (time.perf_counter() - started) * 1000
        sent, raw_body = recorded_exchange(
            raw.http_request, raw.http_response.text, self._secrets, stored_texts
        )
        if not completion.choices:
            raise LlmCallError(
                message="the response has no choices",
                provider=self.provider,
                model=model,
                error_class="malformed_body",
                status_code=200,
                vendor_request_id=completion._request_id or completion.id,
                latency_ms=latency_ms,
                raw_body=truncate(raw_body),
                request=sent.model_dump(mode="json"),
            )
        usage = completion.usage
        return LlmCallRecord(
            provider=self.provider,
            model=completion.model or model,
            base_url=self.base_url,
            temperature=body.get("temperature"),  # what was sent, not what was asked for
            max_tokens=max_tokens,
            prompt_id=prompt.prompt_id,
            prompt_sha256=prompt.sha256,
            raw_completion=completion.choices[0].message.content or "",
            input_tokens=getattr(usage, "prompt_tokens", None),
            output_tokens=getattr(usage, "completion_tokens", None),
            vendor_request_id=completion._request_id or completion.id,
            latency_ms=latency_ms,
            request=sent,
            raw_body=raw_body,
        )

    def _request(self, body: dict) -> dict:
        return {"method": "POST", "url": f"{self.base_url}/chat/completions", "body": body}

    def _error(self, exc: Exception, model: str, body: dict, started: float) -> LlmCallError:
        latency_ms = (time.perf_counter() - started) * 1000
        return sdk_call_error(
            exc,
            provider=self.provider,
            model=model,
            secrets=self._secrets,
            fallback_request=self._request(body),
            latency_ms=latency_ms,
            status_error=openai.APIStatusError,
            timeout_error=openai.APITimeoutError,
            request_id_header="x-request-id",
        )
