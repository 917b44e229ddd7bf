"""`local-rag`: an offline, deterministic stand-in for a research system. NOT a vendor.

It exists so the DRACO pipeline (research -> normalise -> judge -> dbt) runs anywhere with no
key and no network. Method (METHOD, hashed into the SystemRef like a prompt):

1. BM25 (bm25s, English stopwords) over the passages of a local corpus
   (`collectors.local_corpus`: the offline demo corpus or the user's documents), query =
   the task's problem; the top `passages_k` passages are grouped by document, in rank order,
   keeping the first `documents_k` documents.
2. For each document, the `sentences_per_document` sentences of its retrieved passages that
   share the most distinct non-stopword tokens with the problem (ties: earlier sentence), in
   document order, each followed by the document's inline marker [n].
3. The report is a title plus one short section per document; the structured citations are
   the documents used (url, title), in marker order. No bibliography is written into the text:
   the normaliser appends the uniform one, as for every system.

Provider "offline": no HTTP, no provider_call events (source_event_ids is empty). No retrieved
document -> ResearchFailed(empty_output), like a vendor returning nothing.

Depths (`VARIANTS`): the same method with fewer or more passages, documents and sentences, so
the demo compares systems that differ in one known way. `closed-book-research` is the control:
no retrieval at all, the report restates the problem (what a judge gives for the question's own
words). None of them bills anything; the events report no cost and the research_prices seed
prices them with a DEMO price (basis "demo price", `DEMO_PRICE_USD_PER_TASK`): made-up figures
so the demo's cost views have a shape, never a vendor's price.
"""

from __future__ import annotations

import asyncio
import re
import time

from collectors.draco.model import Emit, RubricTask
from collectors.lexical import content_tokens
from collectors.local_corpus import CHUNKER_VERSION, Passage, PassageCorpus
from warehouse.canonical import sha256_hex
from warehouse.events import (
    ReportCitation,
    ResearchCompleted,
    ResearchFailed,
    SystemRef,
    utc_now_iso,
)

LANE = "local-rag"
PROVIDER = "offline"
VERSION = "1"
METHOD = (
    "local-rag@1: bm25s (stopwords=en) over corpus passages, query = problem; top passages "
    "grouped by document (rank order); per document the sentences sharing the most distinct "
    "non-stopword tokens with the problem (ties: earlier), in document order, marked [n]; "
    "title + one section per document; citations = documents used"
)
DEMO_PRICE_BASIS = "demo price"
# lane -> (passages_k, documents_k, sentences_per_document)
VARIANTS: dict[str, tuple[int, int, int]] = {
    "local-rag-shallow": (5, 2, 2),
    LANE: (20, 5, 3),
    "local-rag-deep": (60, 8, 5),
}
CLOSED_BOOK = "closed-book-research"
# Made up for the offline demo (a deeper system reads and writes more): not a vendor's price.
DEMO_PRICE_USD_PER_TASK: dict[str, float] = {
    CLOSED_BOOK: 0.002,
    "local-rag-shallow": 0.01,
    LANE: 0.03,
    "local-rag-deep": 0.08,
}
CLOSED_BOOK_METHOD = (
    "closed-book-research@1: no retrieval; title + the problem restated as the report's only "
    "section, no citations (a control: what the judge gives the question's own words)"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
TITLE_MAX_CHARS = 100


class LocalRagLane:
    lane = LANE
    provider = PROVIDER

    def __init__(
        self,
        corpus: PassageCorpus,
        *,
        passages_k: int = 20,
        documents_k: int = 5,
        sentences_per_document: int = 3,
        lane: str | None = None,  # another name for the same method (a depth of VARIANTS)
    ):
        import bm25s

        if lane is not None:
            self.lane = lane
        self.corpus = corpus
        self.passages_k = passages_k
        self.documents_k = documents_k
        self.sentences_per_document = sentences_per_document
        self._bm25s = bm25s
        tokens = bm25s.tokenize(
            [p.text for p in corpus.passages], stopwords="en", show_progress=False
        )
        self._index = bm25s.BM25()
        self._index.index(tokens, show_progress=False)

    async def __aenter__(self) -> LocalRagLane:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def preflight(self) -> tuple[str, str]:
        return "ok", f"offline: {len(self.corpus.passages)} passages, no key, no network"

    def system_ref(self) -> SystemRef:
        return SystemRef(
            name=self.lane,
            version=f"{VERSION}+bm25s-{self._bm25s.__version__}",
            settings={
                "provider": self.provider,
                "offline_stand_in": True,
                "note": "offline extractive stand-in for a research system, not a vendor",
                "method": METHOD,
                "method_sha256": sha256_hex(METHOD),
                "corpus": self.corpus.dataset.model_dump(mode="json"),
                "passages": len(self.corpus.passages),
                "chunker": CHUNKER_VERSION,
                "passages_k": self.passages_k,
                "documents_k": self.documents_k,
                "sentences_per_document": self.sentences_per_document,
                "demo_price_usd_per_task": DEMO_PRICE_USD_PER_TASK.get(self.lane),
            },
        )

    # --- retrieval and composition -----------------------------------------------------------

    def retrieve(self, problem: str) -> list[tuple[str, str, list[Passage]]]:
        """(url, title, passages in rank order) per document, best document first."""
        query = self._bm25s.tokenize([problem], stopwords="en", show_progress=False)
        if not query.vocab:
            return []
        k = min(self.passages_k, len(self.corpus.passages))
        indices, scores = self._index.retrieve(query, k=k, show_progress=False)
        documents: dict[str, tuple[str, list[Passage]]] = {}
        for index, score in zip(indices[0].tolist(), scores[0].tolist(), strict=True):
            if score <= 0:
                continue
            passage = self.corpus.passages[index]
            if passage.url not in documents:
                if len(documents) == self.documents_k:
                    continue
                documents[passage.url] = (passage.title, [])
            documents[passage.url][1].append(passage)
        return [(url, title, passages) for url, (title, passages) in documents.items()]

    def _sentences(self, problem_tokens: set[str], passages: list[Passage]) -> list[str]:
        ordered = sorted(passages, key=lambda p: _passage_order(p.passage_id))
        sentences = [s.strip() for p in ordered for s in _SENTENCE_END.split(p.text) if s.strip()]
        scored = [
            (len(content_tokens(s) & problem_tokens), position)
            for position, s in enumerate(sentences)
        ]
        best = sorted(scored, key=lambda pair: (-pair[0], pair[1]))[: self.sentences_per_document]
        chosen = sorted(position for shared, position in best if shared > 0) or [0]
        return [sentences[position] for position in chosen]

    def compose(self, problem: str) -> tuple[str, list[ReportCitation]]:
        documents = self.retrieve(problem)
        if not documents:
            return "", []
        problem_tokens = content_tokens(problem)
        lines = [f"# Research report: {_title(problem)}", ""]
        cited: list[ReportCitation] = []
        for n, (url, title, passages) in enumerate(documents, start=1):
            sentences = self._sentences(problem_tokens, passages)
            lines.append(f"## {n}. {title}")
            lines.append("")
            lines.append(" ".join(_marked(sentence, n) for sentence in sentences))
            lines.append("")
            cited.append(ReportCitation(url=url, title=title))
        return "\n".join(lines).rstrip() + "\n", cited

    # --- the lane protocol --------------------------------------------------------------------

    async def research(
        self, task: RubricTask, instruction: str, *, attempt: int, emit: Emit
    ) -> ResearchCompleted | ResearchFailed:
        submitted_at = utc_now_iso()
        started = time.perf_counter()
        text, cited = await asyncio.to_thread(self.compose, task.problem)
        wall_clock_ms = (time.perf_counter() - started) * 1000.0
        if not text:
            return ResearchFailed(
                lane=self.lane,
                provider=self.provider,
                item_id=task.item_id,
                attempt=attempt,
                stage="result",
                error_class="empty_output",
                error_message="no corpus document matches the problem",
                wall_clock_ms=wall_clock_ms,
            )
        return ResearchCompleted(
            lane=self.lane,
            provider=self.provider,
            item_id=task.item_id,
            attempt=attempt,
            raw_output=text,
            raw_citations=cited,
            instruction_sha256=sha256_hex(instruction.encode("utf-8")),
            submitted_at=submitted_at,
            finished_at=utc_now_iso(),
            wall_clock_ms=wall_clock_ms,
            usage={"documents": len(cited)},  # no cost: nothing is billed (the seed's demo price)
        )


class ClosedBookResearchLane:
    """The control: no corpus, no retrieval; the report is the problem restated."""

    lane = CLOSED_BOOK
    provider = PROVIDER

    async def __aenter__(self) -> ClosedBookResearchLane:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def preflight(self) -> tuple[str, str]:
        return "ok", "offline control: no retrieval, no key, no network"

    def system_ref(self) -> SystemRef:
        return SystemRef(
            name=self.lane,
            version=VERSION,
            settings={
                "provider": self.provider,
                "offline_stand_in": True,
                "note": "offline closed-book control (no retrieval), not a vendor",
                "method": CLOSED_BOOK_METHOD,
                "method_sha256": sha256_hex(CLOSED_BOOK_METHOD),
                "demo_price_usd_per_task": DEMO_PRICE_USD_PER_TASK[CLOSED_BOOK],
            },
        )

    def compose(self, problem: str) -> str:
        restated = " ".join(problem.split())
        return f"# Research report: {_title(problem)}\n\n## Question\n\n{restated}\n"

    async def research(
        self, task: RubricTask, instruction: str, *, attempt: int, emit: Emit
    ) -> ResearchCompleted:
        submitted_at = utc_now_iso()
        started = time.perf_counter()
        text = self.compose(task.problem)
        return ResearchCompleted(
            lane=self.lane,
            provider=self.provider,
            item_id=task.item_id,
            attempt=attempt,
            raw_output=text,
            raw_citations=[],
            instruction_sha256=sha256_hex(instruction.encode("utf-8")),
            submitted_at=submitted_at,
            finished_at=utc_now_iso(),
            wall_clock_ms=(time.perf_counter() - started) * 1000.0,
            usage={"documents": 0},
        )


def _marked(sentence: str, n: int) -> str:
    """The marker goes before the sentence's final punctuation: "... estimates [2]."."""
    if sentence[-1] in ".!?":
        return f"{sentence[:-1]} [{n}]{sentence[-1]}"
    return f"{sentence} [{n}]"


def _passage_order(passage_id: str) -> tuple[str, int]:
    document, _, n = passage_id.rpartition("#")
    return (document, int(n) if n.isdigit() else 0)


def _title(problem: str) -> str:
    first = " ".join(problem.split())
    first = _SENTENCE_END.split(first, maxsplit=1)[0]
    if len(first) > TITLE_MAX_CHARS:
        first = first[: TITLE_MAX_CHARS - 1].rstrip() + "…"
    return first
