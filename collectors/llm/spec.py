"""The command-line spec of an LLM role (judge, grader, synthesiser, relevance judge), the same
grammar in every family:

    offline                                   the keyless stand-in
    anthropic:<model>                         Anthropic Messages API
    openai:<model>                            OpenAI Chat Completions
    openai-compatible:<model>@<base url>      vLLM / Ollama / llama.cpp
"""

from __future__ import annotations

from dataclasses import dataclass

from collectors.llm import PROVIDERS, LlmConfigError

OFFLINE = "offline"


@dataclass(frozen=True)
class LlmSpec:
    provider: str
    model: str
    base_url: str | None = None


def parse_llm_spec(text: str, *, option: str = "--llm") -> LlmSpec | None:
    """None for "offline"; raises LlmConfigError naming the option on anything malformed."""
    text = text.strip()
    if text == OFFLINE:
        return None
    provider, sep, rest = text.partition(":")
    if not sep or not rest or provider not in PROVIDERS:
        raise LlmConfigError(
            f"{option} {text!r}: expected 'offline', 'anthropic:<model>', 'openai:<model>' or "
            "'openai-compatible:<model>@<base url>'"
        )
    base_url = None
    if provider == "openai-compatible":
        model, at, base_url = rest.partition("@")
        if not at or not model or not base_url.startswith(("http://", "https://")):
            raise LlmConfigError(
                f"{option} {text!r}: openai-compatible needs '<model>@http(s)://host[:port]/v1'"
            )
    else:
        model = rest
    return LlmSpec(provider, model, base_url)
