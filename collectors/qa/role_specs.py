"""Build the three roles from short command-line specs.

    offline                                   the keyless stand-in (labelled "offline")
    anthropic:<model>                         Anthropic Messages API (ANTHROPIC_API_KEY)
    openai:<model>                            OpenAI Chat Completions (OPENAI_API_KEY)
    openai-compatible:<model>@<base url>      vLLM / Ollama / llama.cpp (key optional:
                                              OPENAI_COMPATIBLE_API_KEY)

The grader defaults to upstream's configuration (simple-evals: gpt-4.1-2025-04-14,
temperature 0.5, max_tokens 2048, generic system message); `offline` gives the project's
normalized-match grader, which is never labelled official.
"""

from __future__ import annotations

from pathlib import Path

from collectors.llm import make_backend
from collectors.llm.spec import LlmSpec, parse_llm_spec
from collectors.qa.grader_template import load_grader_template
from collectors.qa.offline import (
    ExtractiveSynthesizer,
    LexicalRelevanceJudge,
    NormalizedMatchGrader,
)
from collectors.qa.roles import (
    UPSTREAM_GRADER_SYSTEM,
    Grader,
    LlmSynthesizer,
    OfficialGrader,
    RelevanceJudge,
    Synthesizer,
    UmbrelaJudge,
)


def _backend(spec: LlmSpec, max_retries: int):
    return make_backend(spec.provider, base_url=spec.base_url, max_retries=max_retries)


def build_synthesizer(
    text: str, *, max_retries: int = 2, temperature: float | None = 0.0
) -> Synthesizer:
    spec = parse_llm_spec(text, option="--synthesizer")
    if spec is None:
        return ExtractiveSynthesizer()
    return LlmSynthesizer(_backend(spec, max_retries), model=spec.model, temperature=temperature)


def build_grader(
    text: str,
    *,
    cache_dir: Path,
    max_retries: int = 2,
    temperature: float | None = 0.5,
    max_tokens: int = 2048,
    system: str | None = UPSTREAM_GRADER_SYSTEM,
) -> Grader:
    spec = parse_llm_spec(text, option="--grader")
    if spec is None:
        return NormalizedMatchGrader()
    template = load_grader_template(cache_dir)
    return OfficialGrader(
        _backend(spec, max_retries),
        template,
        model=spec.model,
        temperature=temperature,
        max_tokens=max_tokens,
        system=system,
    )


def build_relevance_judge(text: str | None, *, max_retries: int = 2) -> RelevanceJudge | None:
    """None (no relevance stage) for an empty spec or "none"."""
    if text is None or text.strip() in ("", "none"):
        return None
    spec = parse_llm_spec(text, option="--relevance-judge")
    if spec is None:
        return LexicalRelevanceJudge()
    return UmbrelaJudge(_backend(spec, max_retries), model=spec.model)
