"""What a QA lane is to the runner, and the two lanes that need no key.

A lane is two small callables: `await lane.search(question, item_id=, attempt=)` returns the
raw provider-call payload (`ProviderCallCompleted` or `ProviderCallFailed`, exactly what goes
in the log; an answer product that submits a run and then waits for it returns both calls'
payloads as a tuple, the stage-"search" one last), and `lane.normalize(completed_call)` turns
a stored 2xx response into ranked chunks (tagged `lane.normalizer_version`). Every lane that calls something (local-bm25, the
vendor search and answer lanes) also has `await lane.call(...)`: the same call as the one
call-result type, `collectors.http.CallResult` (normalised value, raw request and response,
timings, list-price cost); `search` is its payload. Normalising from the stored payload, not from a
live response, is what lets the chunks stage resume on its own. Lanes never see each other
and nothing is cached between runs. A lane may carry a `resource` (an async context manager,
e.g. the shared HTTP pool of the vendor lanes) that the runner opens for the run's duration.

- `local-bm25`  BM25 (bm25s) over a local passage corpus. It still records a
                `provider_call_completed` (provider "local", request = the query, raw body =
                the hits as JSON) so lineage is the same for every searching lane.
- `closed-book` no search at all (`needs_search = False`): the synthesiser gets an empty
                context, sizing what the model knows without retrieval (methodology 2.2).

Vendor search lanes come from `collectors.search` through `collectors.qa.vendor_lanes`.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Protocol, runtime_checkable

from collectors.http import CallResult
from collectors.local_corpus import CHUNKER_VERSION, PassageCorpus
from warehouse.canonical import canonical_json
from warehouse.events import (
    CallTimings,
    Chunk,
    ProviderCallCompleted,
    ProviderCallFailed,
    RecordedRequest,
    SystemRef,
)

RESULTS_PER_QUERY = 10
# Made-up $ per 1,000 queries for the two offline lanes, so the demo's cost views have a shape:
# the lane_prices seed carries them with basis "demo price" (collectors/price_seeds.py), the way
# the research_prices seed prices DRACO's offline stand-ins. Not a vendor's price: a call of
# these lanes costs nothing (their provider_call events say 0).
DEMO_PRICE_PER_1K_USD: dict[str, float] = {"local-bm25": 0.5, "closed-book": 0.1}


@runtime_checkable
class QaLane(Protocol):
    name: str
    provider: str
    needs_search: bool
    concurrency: int
    price_per_1k_usd: float | None  # list price per 1,000 queries, None = no search call
    normalizer_version: str | None

    def system_ref(self) -> SystemRef: ...

    async def search(
        self, question: str, *, item_id: str, attempt: int
    ) -> (
        ProviderCallCompleted
        | ProviderCallFailed
        | tuple[ProviderCallCompleted | ProviderCallFailed, ...]
    ): ...

    def normalize(self, call: ProviderCallCompleted) -> list[Chunk]: ...


class ClosedBookLane:
    name = "closed-book"
    provider = "none"
    needs_search = False
    concurrency = 1
    price_per_1k_usd = None
    normalizer_version = None

    def system_ref(self) -> SystemRef:
        return SystemRef(name=self.name, version="1", settings={"search": None})

    async def search(self, question: str, *, item_id: str, attempt: int) -> ProviderCallCompleted:
        raise RuntimeError("the closed-book lane makes no search call")

    def normalize(self, call: ProviderCallCompleted) -> list[Chunk]:
        raise RuntimeError("the closed-book lane has no search results")


class LocalBm25Lane:
    name = "local-bm25"
    provider = "local"
    needs_search = True
    concurrency = 1
    price_per_1k_usd = 0.0
    normalizer_version = "local-bm25@1"

    def __init__(self, corpus: PassageCorpus, k: int = RESULTS_PER_QUERY):
        import bm25s

        self.corpus = corpus
        self.k = k
        self._bm25s = bm25s
        tokens = bm25s.tokenize(
            [p.text for p in corpus.passages], stopwords="en", show_progress=False
        )
        self._index = bm25s.BM25()
        self._index.index(tokens, show_progress=False)

    @property
    def endpoint(self) -> str:
        dataset = self.corpus.dataset
        return f"local-bm25://{dataset.name}@{dataset.sha256[:12]}"

    def system_ref(self) -> SystemRef:
        return SystemRef(
            name=self.name,
            version=f"1+bm25s-{self._bm25s.__version__}",
            settings={
                "corpus": self.corpus.dataset.model_dump(mode="json"),
                "passages": len(self.corpus.passages),
                "passage_max_chars": self.corpus.max_chars,
                "chunker": CHUNKER_VERSION,
                "k": self.k,
                "tokenizer": "bm25s.tokenize(stopwords='en')",
            },
        )

    def _hits(self, question: str) -> list[dict]:
        query = self._bm25s.tokenize([question], stopwords="en", show_progress=False)
        if not query.vocab:
            return []  # nothing but stopwords: no hits rather than an error
        k = min(self.k, len(self.corpus.passages))
        documents, scores = self._index.retrieve(query, k=k, show_progress=False)
        hits = []
        for index, score in zip(documents[0].tolist(), scores[0].tolist(), strict=True):
            if score <= 0:
                continue
            passage = self.corpus.passages[index]
            hits.append(
                {
                    "rank": len(hits) + 1,
                    "passage_id": passage.passage_id,
                    "url": passage.url,
                    "title": passage.title,
                    "score": round(float(score), 6),
                    "text": passage.text,
                }
            )
        return hits

    async def call(self, question: str, *, item_id: str, attempt: int) -> CallResult[list[Chunk]]:
        """The BM25 query as the one call-result type every searching lane returns."""
        payload = await self.search(question, item_id=item_id, attempt=attempt)
        return CallResult.from_payload(
            payload,
            self._chunks,
            normalizer_version=self.normalizer_version,
            price_usd_per_1k=self.price_per_1k_usd,
        )

    async def search(self, question: str, *, item_id: str, attempt: int) -> ProviderCallCompleted:
        started = time.perf_counter()
        hits = await asyncio.to_thread(self._hits, question)
        elapsed_ms = (time.perf_counter() - started) * 1000
        return ProviderCallCompleted(
            lane=self.name,
            provider=self.provider,
            stage="search",
            item_id=item_id,
            attempt=attempt,
            request=RecordedRequest(
                method="SEARCH", url=self.endpoint, body={"query": question, "k": self.k}
            ),
            status_code=200,
            raw_body=canonical_json({"hits": hits}),
            timings=CallTimings(
                queue_wait_ms=0.0, round_trip_ms=elapsed_ms, whole_call_ms=elapsed_ms
            ),
            http_attempts=1,
            concurrency=self.concurrency,
        )

    def normalize(self, call: ProviderCallCompleted) -> list[Chunk]:
        return self._chunks(json.loads(call.raw_body))

    @staticmethod
    def _chunks(document: dict) -> list[Chunk]:
        return [
            Chunk(rank=hit["rank"], url=hit["url"], title=hit["title"], text=hit["text"])
            for hit in document["hits"]
        ]


OFFLINE_LANES = ("local-bm25", "closed-book")
