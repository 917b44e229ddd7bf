"""LLM backends for the synthesiser, graders and relevance judges.

- `base`               the `LlmClient` protocol, `PromptRef`, `LlmCallError`
- `anthropic_backend`  Anthropic Messages API (official SDK on httpx2; API version pinned)
- `openai_backend`     OpenAI Chat Completions, and any OpenAI-compatible base URL
                       (vLLM, Ollama, llama.cpp) labelled "openai-compatible"

Offline stand-ins that need no key live with the roles they play (`collectors.qa.offline`)
and are labelled provider "offline" in every record.
"""

from __future__ import annotations

from collections.abc import Callable

from collectors.llm.base import LlmCallError, LlmClient, LlmConfigError, PromptRef

PROVIDERS = ("anthropic", "openai", "openai-compatible")


def make_backend(provider: str, *, base_url: str | None = None, **options) -> LlmClient:
    """An SDK-backed client. SDKs are imported only when their provider is asked for."""
    factories: dict[str, Callable[..., LlmClient]] = {
        "anthropic": _anthropic,
        "openai": _openai,
        "openai-compatible": _openai,
    }
    try:
        factory = factories[provider]
    except KeyError:
        raise LlmConfigError(
            f"unknown LLM provider {provider!r}; available: {', '.join(PROVIDERS)} (or 'offline')"
        ) from None
    return factory(provider=provider, base_url=base_url, **options)


def _anthropic(*, provider: str, base_url: str | None, **options) -> LlmClient:
    from collectors.llm.anthropic_backend import AnthropicBackend

    return AnthropicBackend(base_url=base_url, **options)


def _openai(*, provider: str, base_url: str | None, **options) -> LlmClient:
    from collectors.llm.openai_backend import OpenAIBackend

    return OpenAIBackend(provider=provider, base_url=base_url, **options)


__all__ = ["PROVIDERS", "LlmCallError", "LlmClient", "LlmConfigError", "PromptRef", "make_backend"]
