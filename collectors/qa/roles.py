"""The three judgement roles of a QA run, each behind a small protocol.

- Synthesizer: question + ranked chunks -> one short answer (empty chunks = closed-book).
  One fixed model and prompt for every lane (methodology 2.2, step 3).
- Grader: question + gold + answer -> A/B/C. `OfficialGrader` renders the upstream SimpleQA
  template (fetched at its pin); anything else must say `official = False`.
- RelevanceJudge: query + one chunk -> UMBRELA grade 0-3.

LLM-backed implementations here; offline stand-ins in `collectors.qa.offline`. Every result
carries the `LlmCallRecord` of how it was produced. Errors from a backend propagate as
`LlmCallError`; the runner records them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from collectors.llm.base import LlmClient, PromptRef
from collectors.qa.grader_template import GRADE_LABELS, GraderTemplate, parse_grade
from collectors.qa.prompts import load_prompt
from warehouse.events import Chunk, LlmCallRecord, SystemRef

SYNTH_TOP_K = 10
CHUNK_CHAR_BUDGET = 2_000  # equal per-chunk budget (ref-harness: equal token budget)
RELEVANCE_TEXT_CAP = 4_000
UPSTREAM_GRADER_SYSTEM = "You are a helpful assistant."  # simple-evals' generic system message


@dataclass(frozen=True)
class Synthesis:
    outcome: str  # "answered" | "refused" (an empty completion is a landed non-answer)
    answer: str
    chunk_ranks_used: list[int]
    llm: LlmCallRecord


@dataclass(frozen=True)
class Grade:
    grade: str  # A | B | C
    parse_ok: bool
    llm: LlmCallRecord

    @property
    def label(self) -> str:
        return GRADE_LABELS[self.grade]


@dataclass(frozen=True)
class Relevance:
    grade: int  # 0..3
    parse_ok: bool
    llm: LlmCallRecord


@runtime_checkable
class Synthesizer(Protocol):
    def system_ref(self) -> SystemRef: ...
    def synthesize(self, question: str, chunks: Sequence[Chunk]) -> Synthesis: ...


@runtime_checkable
class Grader(Protocol):
    grader_id: str
    official: bool

    def system_ref(self) -> SystemRef: ...
    def grade(self, question: str, target: str, answer: str) -> Grade: ...


@runtime_checkable
class RelevanceJudge(Protocol):
    judge_id: str

    def system_ref(self) -> SystemRef: ...
    def judge(self, query: str, chunk: Chunk) -> Relevance: ...


def _client_settings(client: LlmClient) -> dict[str, object]:
    settings = getattr(client, "settings", None)
    return {
        "provider": client.provider,
        **(settings() if callable(settings) else {"base_url": client.base_url}),
    }


def render_context(chunks: Sequence[Chunk], budget: int = CHUNK_CHAR_BUDGET) -> str:
    """`[title](url)` + text per chunk, each cut to the same character budget."""
    blocks = []
    for chunk in chunks:
        text = chunk.text if len(chunk.text) <= budget else chunk.text[:budget] + " …"
        blocks.append(f"[{chunk.rank}] [{chunk.title}]({chunk.url})\n{text}")
    return "\n\n".join(blocks)


class LlmSynthesizer:
    def __init__(
        self,
        client: LlmClient,
        *,
        model: str,
        temperature: float | None = 0.0,
        max_tokens: int = 256,
        top_k: int = SYNTH_TOP_K,
        chunk_char_budget: int = CHUNK_CHAR_BUDGET,
    ):
        self.client = client
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.top_k = top_k
        self.chunk_char_budget = chunk_char_budget
        self.prompt = load_prompt("qa-synthesizer@1")
        self.closed_book_prompt = load_prompt("qa-closed-book@1")

    def system_ref(self) -> SystemRef:
        return SystemRef(
            name="llm-synthesizer",
            version="1",
            settings={
                **_client_settings(self.client),
                "model": self.model,
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
                "top_k": self.top_k,
                "chunk_char_budget": self.chunk_char_budget,
                "prompt": {"id": self.prompt.prompt_id, "sha256": self.prompt.sha256},
                "closed_book_prompt": {
                    "id": self.closed_book_prompt.prompt_id,
                    "sha256": self.closed_book_prompt.sha256,
                },
            },
        )

    def synthesize(self, question: str, chunks: Sequence[Chunk]) -> Synthesis:
        used = list(chunks)[: self.top_k]
        if used:
            prompt = self.prompt
            text = prompt.render(
                question=question, context=render_context(used, self.chunk_char_budget)
            )
        else:
            prompt = self.closed_book_prompt
            text = prompt.render(question=question)
        record = self.client.complete(
            text,
            prompt=prompt.ref,
            model=self.model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
        answer = record.raw_completion.strip()
        return Synthesis(
            outcome="answered" if answer else "refused",
            answer=answer,
            chunk_ranks_used=[chunk.rank for chunk in used],
            llm=record,
        )


class OfficialGrader:
    """The upstream SimpleQA classifier: the pinned template, first A|B|C, no match -> C."""

    official = True

    def __init__(
        self,
        client: LlmClient,
        template: GraderTemplate,
        *,
        model: str = "gpt-4.1-2025-04-14",
        temperature: float | None = 0.5,
        max_tokens: int = 2048,
        system: str | None = UPSTREAM_GRADER_SYSTEM,
    ):
        self.client = client
        self.template = template
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.system = system
        self.grader_id = (
            f"simpleqa-official@{template.sha256[:12]}:{client.provider}:{model}:t={temperature}"
        )

    def system_ref(self) -> SystemRef:
        return SystemRef(
            name="simpleqa-official-grader",
            version=self.template.commit[:12],
            settings={
                **_client_settings(self.client),
                "grader_id": self.grader_id,
                "model": self.model,
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
                "system": self.system,
                "template": {"source": self.template.source_url, "sha256": self.template.sha256},
                "parse_rule": "first (A|B|C) anywhere; no match -> C, parse_ok=false",
            },
        )

    def grade(self, question: str, target: str, answer: str) -> Grade:
        text = self.template.render(question=question, target=target, predicted_answer=answer)
        record = self.client.complete(
            text,
            prompt=_template_ref(self.template),
            model=self.model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            system=self.system,
        )
        grade, parse_ok = parse_grade(record.raw_completion)
        return Grade(grade=grade, parse_ok=parse_ok, llm=record)


def _template_ref(template: GraderTemplate) -> PromptRef:
    return PromptRef(template.prompt_id, template.sha256)


_FINAL_SCORE = re.compile(r"final\s+score\s*[:=]?\s*\**\s*([0-3])\b", re.IGNORECASE)
_STANDALONE_DIGIT = re.compile(r"(?<![\w.])([0-3])(?![\w.])")


def parse_relevance(completion: str) -> tuple[int, bool]:
    """The last final-score marker, else the first standalone 0-3; unparseable -> (0, False)."""
    markers = _FINAL_SCORE.findall(completion or "")
    if markers:
        return int(markers[-1]), True
    match = _STANDALONE_DIGIT.search(completion or "")
    if match:
        return int(match.group(1)), True
    return 0, False


class UmbrelaJudge:
    def __init__(
        self,
        client: LlmClient,
        *,
        model: str,
        temperature: float | None = 0.0,
        max_tokens: int = 512,
        text_cap: int = RELEVANCE_TEXT_CAP,
    ):
        self.client = client
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.text_cap = text_cap
        self.prompt = load_prompt("umbrela-relevance@1")
        self.judge_id = (
            f"umbrela@{self.prompt.sha256[:12]}:{client.provider}:{model}:t={temperature}"
        )

    def system_ref(self) -> SystemRef:
        return SystemRef(
            name="umbrela-judge",
            version="1",
            settings={
                **_client_settings(self.client),
                "judge_id": self.judge_id,
                "model": self.model,
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
                "text_cap": self.text_cap,
                "prompt": {"id": self.prompt.prompt_id, "sha256": self.prompt.sha256},
                "relevant_threshold": 2,
            },
        )

    def judge(self, query: str, chunk: Chunk) -> Relevance:
        text = self.prompt.render(
            query=query, title=chunk.title, url=chunk.url, text=chunk.text[: self.text_cap]
        )
        record = self.client.complete(
            text,
            prompt=self.prompt.ref,
            model=self.model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
        grade, parse_ok = parse_relevance(record.raw_completion)
        return Relevance(grade=grade, parse_ok=parse_ok, llm=record)
