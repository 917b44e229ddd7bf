"""Offline stand-ins for the three roles: no key, no network, deterministic.

They exist so the demo and the tests run the whole pipeline anywhere. They are NOT the
benchmark's synthesiser, grader or judge, and every record says so: provider "offline",
model "<method>@<version>", and the grader's verdicts carry `official=False`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

from collectors.lexical import content_tokens, normalize
from collectors.qa.roles import SYNTH_TOP_K, Grade, Relevance, Synthesis
from warehouse.canonical import sha256_hex
from warehouse.events import Chunk, LlmCallRecord, SystemRef

OFFLINE = "offline"
DONT_KNOW = "I don't know"

# A method description stands in for a prompt: its sha256 changes when the method does.
EXTRACTIVE_METHOD = (
    "offline-extractive@1: split the top chunks into sentences; answer with the sentence that "
    "shares the most distinct non-stopword tokens with the question (ties: earlier rank, "
    "earlier sentence); fewer than 2 shared tokens or no chunks -> I don't know"
)
MATCH_METHOD = (
    "offline-normalized-match@1: NFKC + casefold, delete punctuation, collapse whitespace; empty or "
    "'don't know' -> C; normalized gold contained in normalized answer -> A; else B"
)
LEXICAL_METHOD = (
    "offline-lexical-relevance@1: share f of the query's distinct non-stopword tokens found in "
    "the chunk (title + text): f >= 0.75 -> 3, >= 0.5 -> 2, >= 0.2 -> 1, else 0"
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_DONT_KNOW = re.compile(r"\b(?:i\s+)?(?:do\s+not|dont)\s+know\b")
MAX_ANSWER_CHARS = 300
MIN_SHARED_TOKENS = 2


def _record(model: str, method: str, completion: str, started: float) -> LlmCallRecord:
    return LlmCallRecord(
        provider=OFFLINE,
        model=model,
        prompt_id=model,
        prompt_sha256=sha256_hex(method),
        raw_completion=completion,
        latency_ms=(time.perf_counter() - started) * 1000,
    )


class ExtractiveSynthesizer:
    model = "offline-extractive@1"

    def __init__(self, top_k: int = SYNTH_TOP_K):
        self.top_k = top_k

    def system_ref(self) -> SystemRef:
        return SystemRef(
            name=self.model,
            version="1",
            settings={
                "provider": OFFLINE,
                "top_k": self.top_k,
                "method_sha256": sha256_hex(EXTRACTIVE_METHOD),
            },
        )

    def synthesize(self, question: str, chunks: Sequence[Chunk]) -> Synthesis:
        started = time.perf_counter()
        used = list(chunks)[: self.top_k]
        wanted = content_tokens(question)
        best, best_score = DONT_KNOW, MIN_SHARED_TOKENS - 1
        for chunk in used:
            for sentence in _SENTENCE_END.split(chunk.text):
                score = len(wanted & content_tokens(sentence))
                if score > best_score:
                    best, best_score = " ".join(sentence.split()), score
        answer = best[:MAX_ANSWER_CHARS]
        return Synthesis(
            outcome="answered",
            answer=answer,
            chunk_ranks_used=[chunk.rank for chunk in used],
            llm=_record(self.model, EXTRACTIVE_METHOD, answer, started),
        )


class NormalizedMatchGrader:
    grader_id = "offline-normalized-match@1"
    official = False

    def system_ref(self) -> SystemRef:
        return SystemRef(
            name=self.grader_id,
            version="1",
            settings={
                "provider": OFFLINE,
                "official": False,
                "method_sha256": sha256_hex(MATCH_METHOD),
            },
        )

    def grade(self, question: str, target: str, answer: str) -> Grade:
        started = time.perf_counter()
        said, gold = normalize(answer), normalize(target)
        if not said or _DONT_KNOW.search(said):
            letter = "C"
        elif gold and gold in said:
            letter = "A"
        else:
            letter = "B"
        return Grade(
            grade=letter, parse_ok=True, llm=_record(self.grader_id, MATCH_METHOD, letter, started)
        )


class LexicalRelevanceJudge:
    judge_id = "offline-lexical-relevance@1"

    def system_ref(self) -> SystemRef:
        return SystemRef(
            name=self.judge_id,
            version="1",
            settings={
                "provider": OFFLINE,
                "method_sha256": sha256_hex(LEXICAL_METHOD),
                "relevant_threshold": 2,
            },
        )

    def judge(self, query: str, chunk: Chunk) -> Relevance:
        started = time.perf_counter()
        wanted = content_tokens(query)
        found = content_tokens(f"{chunk.title} {chunk.text}")
        share = len(wanted & found) / len(wanted) if wanted else 0.0
        grade = 3 if share >= 0.75 else 2 if share >= 0.5 else 1 if share >= 0.2 else 0
        return Relevance(
            grade=grade,
            parse_ok=True,
            llm=_record(self.judge_id, LEXICAL_METHOD, str(grade), started),
        )
