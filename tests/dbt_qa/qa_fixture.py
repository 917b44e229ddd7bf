"""A QA warehouse fixture: real offline runner events (local-bm25 + closed-book, SimpleQA) plus a
crafted multi-lane "vendor" run whose search bodies are vendor-shaped and normalised by the real
search normalisers (collectors/vendors/<vendor>/search.py), with gold-URL variants, failures and retries."""

from __future__ import annotations

import json
import random
from pathlib import Path

from raw_events_fixture import PRODUCER, Clock

from collectors.qa.simpleqa import load_simpleqa
from collectors.search import LANES
from tests.fakes.vendor_responses import search_response
from warehouse.events import (
    AnswerGraded,
    AnswerSynthesized,
    CallTimings,
    ChunksNormalized,
    DatasetRef,
    Envelope,
    ProviderCallCompleted,
    ProviderCallFailed,
    QuestionRegistered,
    RecordedRequest,
    RelevanceGraded,
    RunStarted,
    SystemRef,
    make_event,
)

SIMPLEQA_CSV = Path("/work/shared/data/simpleqa/simple_qa_test_set.csv")
VENDOR_LANES = ("nimble_search", "exa_search_auto", "brave_search", "parallel_search_turbo")
GRADER_ID = "simpleqa-official@test:gpt-test"
JUDGE_ID = "umbrela@test"
N_QUESTIONS = 24


def offline_runner_events(home: Path) -> list[Envelope]:
    """Runs the real offline QA runner (one run + a 3-run series) and returns its envelopes."""
    from collectors.demo.extraction_corpus import build_demo_corpus, load_demo_corpus
    from collectors.local_corpus import from_extraction_corpus
    from collectors.qa.lane_registry import build_lanes
    from collectors.qa.offline import (
        ExtractiveSynthesizer,
        LexicalRelevanceJudge,
        NormalizedMatchGrader,
    )
    from collectors.qa.runner import run_qa
    from warehouse.log import EventLog

    corpus = from_extraction_corpus(load_demo_corpus(build_demo_corpus(home / "corpus")))
    dataset = load_simpleqa(SIMPLEQA_CSV)
    log = EventLog(home / "log")
    lanes = build_lanes(["local-bm25", "closed-book"], corpus=corpus)
    roles = {
        "synthesizer": ExtractiveSynthesizer(),
        "grader": NormalizedMatchGrader(),
        "relevance_judge": LexicalRelevanceJudge(),
    }
    run_qa(log, dataset, lanes, limit=8, random_state=0, **roles)
    for _ in range(3):
        run_qa(log, dataset, lanes, limit=5, random_state=0, series="offline-series", **roles)
    return [Envelope(**event) for _raw, event in log.read()]


def _url_variant(url: str, rng: random.Random) -> str:
    """A predicted URL that normalises to the same gold URL (or a known pitfall)."""
    choice = rng.randrange(5)
    if choice == 0:
        return url.rstrip("/") + "/"
    if choice == 1:
        return url.replace("://", "://www.", 1) if "://www." not in url else url
    if choice == 2:
        return url + ("&" if "?" in url else "?") + "utm=1#frag"
    if choice == 3:
        return url.replace("https://", "HTTPS://", 1)
    return url


def vendor_run_events(clock: Clock, seed: int = 7) -> tuple[str, list[Envelope]]:
    rng = random.Random(seed)
    dataset = load_simpleqa(SIMPLEQA_CSV)
    rows = [dataset.questions[i] for i in rng.sample(range(len(dataset.questions)), N_QUESTIONS)]
    lanes = ["local-bm25", "closed-book", *VENDOR_LANES]
    spec = {
        "name": "vendor-fixture",
        "grader": {"grader_id": GRADER_ID, "official": True},
        "relevance_judge": {"judge_id": JUDGE_ID},
    }
    started = RunStarted(
        benchmark="simpleqa",
        spec=spec,
        spec_sha256="f" * 64,
        dataset=DatasetRef(
            name="simpleqa",
            uri="file://simpleqa",
            sha256=dataset.dataset.sha256,
            item_count=len(dataset.questions),
        ),
        systems=[
            SystemRef(
                name=lane, version="1", settings={"search": None} if lane == "closed-book" else {}
            )
            for lane in lanes
        ],
        seed=seed,
    )
    run_id = "vendor-fixture-run"
    events: list[Envelope] = []
    failures = 0  # failed grader / judge calls so far: alternate today's shape and pre-v2's

    def emit(payload) -> Envelope:
        envelope = make_event(payload, run_id=run_id, producer=PRODUCER, occurred_at=clock.tick())
        events.append(envelope)
        return envelope

    def graded(lane: str, item_id: str, attempt: int, source: str, **verdict) -> Envelope:
        """The run's one grader's grade of one answer (`verdict`: outcome, grade, label, ...)."""
        return emit(
            AnswerGraded(
                lane=lane,
                item_id=item_id,
                attempt=attempt,
                grader_id=GRADER_ID,
                official=True,
                source_event_id=source,
                **verdict,
            )
        )

    def judged(lane: str, item_id: str, attempt: int, rank: int, source: str, **verdict):
        """The run's relevance judge's grade of one chunk."""
        return emit(
            RelevanceGraded(
                lane=lane,
                item_id=item_id,
                attempt=attempt,
                rank=rank,
                judge_id=JUDGE_ID,
                source_event_id=source,
                **verdict,
            )
        )

    emit(started)
    timings = lambda: CallTimings(  # noqa: E731
        queue_wait_ms=rng.uniform(0, 5),
        round_trip_ms=rng.uniform(100, 3000),
        whole_call_ms=rng.uniform(3000, 4000),
    )
    request = RecordedRequest(method="POST", url="https://vendor.invalid/search")
    for order, question in enumerate(rows):
        emit(
            QuestionRegistered(
                item_id=question.item_id,
                dataset_sha256=dataset.dataset.sha256,
                row_position=question.row_position,
                sample_order=order,
                problem=question.problem,
                gold_answer=question.gold_answer,
                gold_urls_raw=list(question.gold_urls_raw),
                topic=question.topic,
                answer_type=question.answer_type,
            )
        )
        gold_tokens = [t for raw in question.gold_urls_raw for t in raw.split() if "://" in t]
        for lane_index, lane in enumerate(lanes):
            skill = 0.3 + 0.12 * lane_index  # lanes differ in how often they find gold URLs
            attempt = 1
            if lane == "closed-book":
                answer_payload = {"outcome": "answered", "answer": "guess"}
                sources: list[str] = []
                chunks = []
            else:
                provider = "local" if lane == "local-bm25" else LANES[lane].provider
                roll = rng.random()
                if lane != "local-bm25" and roll < 0.06:
                    # an auth rejection first (ignored), then a retry as attempt 2
                    emit(
                        ProviderCallFailed(
                            lane=lane,
                            provider=provider,
                            stage="search",
                            item_id=question.item_id,
                            attempt=1,
                            request=request,
                            error_class="auth",
                            error_message="401",
                            status_code=401,
                            landed=True,
                            timings=timings(),
                            http_attempts=1,
                            concurrency=2,
                        )
                    )
                    attempt = 2
                if lane != "local-bm25" and 0.06 <= roll < 0.12:
                    failed = emit(
                        ProviderCallFailed(
                            lane=lane,
                            provider=provider,
                            stage="search",
                            item_id=question.item_id,
                            attempt=attempt,
                            request=request,
                            error_class="timeout",
                            error_message="timed out",
                            status_code=None,
                            landed=False,
                            timings=CallTimings(
                                queue_wait_ms=1, round_trip_ms=None, whole_call_ms=30000
                            ),
                            http_attempts=3,
                            concurrency=2,
                        )
                    )
                    emit(
                        AnswerSynthesized(
                            lane=lane,
                            item_id=question.item_id,
                            attempt=attempt,
                            outcome="failed",
                            answer=None,
                            source_event_ids=[failed.event_id],
                        )
                    )
                    continue
                if lane != "local-bm25" and 0.12 <= roll < 0.15:
                    rejected = emit(
                        ProviderCallFailed(
                            lane=lane,
                            provider=provider,
                            stage="search",
                            item_id=question.item_id,
                            attempt=attempt,
                            request=request,
                            error_class="http_status",
                            error_message="422",
                            status_code=422,
                            landed=True,
                            timings=timings(),
                            http_attempts=1,
                            concurrency=2,
                        )
                    )
                    emit(
                        AnswerSynthesized(
                            lane=lane,
                            item_id=question.item_id,
                            attempt=attempt,
                            outcome="rejected",
                            answer=None,
                            source_event_ids=[rejected.event_id],
                        )
                    )
                    graded(
                        lane,
                        question.item_id,
                        attempt,
                        events[-1].event_id,
                        grade="C",
                        label="not_attempted",
                        outcome="parsed",
                        parse_ok=True,
                    )
                    continue
                count = 0 if roll > 0.95 else 10
                if lane == "local-bm25":
                    chunks_list = [
                        {
                            "rank": i + 1,
                            "url": f"https://local.invalid/doc/{i}",
                            "title": "t",
                            "text": "x",
                        }
                        for i in range(count)
                    ]
                    for i in range(count):
                        if gold_tokens and rng.random() < skill / 4:
                            chunks_list[i]["url"] = _url_variant(rng.choice(gold_tokens), rng)
                    raw_body = json.dumps({"hits": chunks_list})
                    from warehouse.events import Chunk

                    chunks = [Chunk(**c) for c in chunks_list]
                    normalizer_version = "local-bm25@1"
                else:
                    body = search_response(LANES[lane].provider, question.problem, count)
                    results = (
                        body.get("results")
                        or body.get("web", {}).get("results")
                        or body.get("data")
                        or []
                    )
                    for result in results if isinstance(results, list) else []:
                        if gold_tokens and rng.random() < skill / 4:
                            result["url"] = _url_variant(rng.choice(gold_tokens), rng)
                    raw_body = json.dumps(body)
                    chunks = LANES[lane].normalize_raw(raw_body)
                    normalizer_version = LANES[lane].normalizer_version
                search = emit(
                    ProviderCallCompleted(
                        lane=lane,
                        provider=provider,
                        stage="search",
                        item_id=question.item_id,
                        attempt=attempt,
                        request=request,
                        status_code=200,
                        raw_body=raw_body,
                        timings=timings(),
                        http_attempts=1,
                        concurrency=2,
                    )
                )
                normalized = emit(
                    ChunksNormalized(
                        lane=lane,
                        item_id=question.item_id,
                        attempt=attempt,
                        normalizer_version=normalizer_version,
                        source_event_id=search.event_id,
                        chunks=chunks,
                    )
                )
                sources = [normalized.event_id]
                if not chunks:
                    answer_payload = {"outcome": "zero_results", "answer": None}
                else:
                    answer_payload = {"outcome": "answered", "answer": "an answer"}
            answer = emit(
                AnswerSynthesized(
                    lane=lane,
                    item_id=question.item_id,
                    attempt=attempt,
                    source_event_ids=sources,
                    **answer_payload,
                )
            )
            if answer_payload["outcome"] != "answered":
                graded(
                    lane,
                    question.item_id,
                    attempt,
                    answer.event_id,
                    grade="C",
                    label="not_attempted",
                    outcome="parsed",
                    parse_ok=True,
                )
            elif rng.random() < 0.05:
                # A failed grader call: today's shape (answer_graded, outcome failed), and every
                # other one in the shape logs written before v2 hold (provider_call_failed).
                failures += 1
                if failures % 2:
                    graded(
                        lane,
                        question.item_id,
                        attempt,
                        answer.event_id,
                        outcome="failed",
                        grade="B",
                        label="incorrect",
                        parse_ok=False,
                        error_class="http_status",
                        error_message="openai:gpt-4.1 (HTTP 500): 500",
                    )
                else:
                    emit(
                        ProviderCallFailed(
                            lane=lane,
                            provider="openai",
                            stage="grade",
                            item_id=question.item_id,
                            attempt=attempt,
                            request=request,
                            error_class="http_status",
                            error_message="500",
                            status_code=500,
                            landed=False,
                            timings=CallTimings(queue_wait_ms=0, whole_call_ms=10),
                            http_attempts=3,
                            concurrency=4,
                        )
                    )
            else:
                grade = rng.choices("ABC", weights=[skill, 1 - skill, 0.1])[0]
                label = {"A": "correct", "B": "incorrect", "C": "not_attempted"}[grade]
                parse_ok = rng.random() > 0.05
                graded(
                    lane,
                    question.item_id,
                    attempt,
                    answer.event_id,
                    outcome="parsed" if parse_ok else "unparsed",
                    grade=grade,
                    label=label,
                    parse_ok=parse_ok,
                )
            for chunk in chunks:
                if rng.random() < 0.03:
                    failures += 1
                    if failures % 2:
                        judged(
                            lane,
                            question.item_id,
                            attempt,
                            chunk.rank,
                            sources[0],
                            outcome="failed",
                            grade=0,
                            parse_ok=False,
                            error_class="timeout",
                            error_message="openai:gpt-4.1: timed out",
                        )
                        continue
                    emit(
                        ProviderCallFailed(
                            lane=lane,
                            provider="openai",
                            stage=f"relevance:{chunk.rank}",
                            item_id=question.item_id,
                            attempt=attempt,
                            request=request,
                            error_class="timeout",
                            error_message="t",
                            landed=False,
                            timings=CallTimings(queue_wait_ms=0, whole_call_ms=10),
                            http_attempts=3,
                            concurrency=4,
                        )
                    )
                    continue
                judged(
                    lane,
                    question.item_id,
                    attempt,
                    chunk.rank,
                    sources[0],
                    outcome="parsed",
                    grade=rng.choices([0, 1, 2, 3], weights=[4, 3, 2, 1])[0],
                    parse_ok=True,
                )
    return run_id, events
