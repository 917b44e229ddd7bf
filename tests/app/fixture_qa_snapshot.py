"""A serving snapshot with the question-answering marts of docs/warehouse-contract.md.

`build_qa_fixture_snapshot(path)` publishes everything `fixture_snapshot.build_fixture_snapshot`
does (the extraction marts, so the other pages keep working) plus the six QA marts, and the QA
events in `dim_events` / runs in `dim_runs`. The rows are internally consistent: envelopes come
from `warehouse.events.make_event`, answer rows carry the ids of those events, and every
aggregate is a plain re-statement of methodology 2.3–2.6 and 3 over the answer rows.

One series (`pyref-weekly`) of two runs, three lanes (`local-bm25` is the baseline), five
questions, one official grader regime. Run 1: `tavily_search_basic`'s search for the third
question never landed (a failed item, excluded from accuracy); the grader's raw completion for
`brave_search` on the first question, and that lane's raw search body, carry an HTML/JS payload.
"""

from __future__ import annotations

import csv
import json
import math
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
from fixture_snapshot import DDL, MALICIOUS, PRODUCER, _add_events, _rows, _target
from scipy import stats

from warehouse.canonical import canonical_sha256, sha256_hex
from warehouse.events import (
    AnswerGraded,
    AnswerSynthesized,
    CallTimings,
    Chunk,
    ChunksNormalized,
    DatasetRef,
    Envelope,
    LlmCallRecord,
    Payload,
    ProviderCallCompleted,
    ProviderCallFailed,
    QuestionRegistered,
    RecordedRequest,
    RelevanceGraded,
    RunFinished,
    RunStarted,
    SystemRef,
    make_event,
)
from warehouse.ids import run_id_for

# --- the QA marts, column for column as in docs/warehouse-contract.md ---------------------------

QA_DDL = {
    "fct_qa_answers": """
        run_id varchar, benchmark varchar, series varchar, run_index bigint, lane varchar,
        dataset_sha256 varchar, item_id varchar, row_position bigint, sample_order bigint,
        topic varchar, answer_type varchar, problem varchar, gold_answer varchar,
        attempt bigint, outcome varchar, landed boolean, answer varchar, grade varchar,
        label varchar, grader_id varchar, grader_official boolean, grade_parse_ok boolean,
        n_chunks bigint, url_normalizer_version varchar,
        ndcg_5 double, ndcg_10 double, recall_5 double, recall_10 double, mrr double,
        hit_5 double, hit_10 double, llm_hit_10 double, llm_precision_10 double,
        relevance_threshold bigint, queue_wait_ms double, round_trip_ms double,
        whole_call_ms double,
        search_event_id varchar, chunks_event_id varchar, answer_event_id varchar,
        grade_event_id varchar
    """,
    "qa_leaderboard": """
        run_id varchar, benchmark varchar, series varchar, run_index bigint, lane varchar,
        grader_id varchar, grader_official boolean,
        n_questions bigint, n_landed bigint, n_failed bigint, failure_rate double,
        strict_accuracy double, strict_accuracy_ci_low double, strict_accuracy_ci_high double,
        is_correct double, is_incorrect double, is_not_attempted double,
        accuracy_given_attempted double, f1 double,
        ndcg_5 double, ndcg_10 double, recall_5 double, recall_10 double, mrr double,
        hit_10 double, llm_hit_10 double, llm_precision_10 double,
        latency_p50_ms double, latency_p95_ms double,
        usd_per_1k double, run_cost_usd double, price_snapshot_date date, price_basis varchar,
        baseline_lane varchar, accuracy_p_adjusted double, bootstrap_seed bigint,
        event_ids varchar[]
    """,
    "fct_qa_significance": """
        run_id varchar, grader_id varchar, baseline_lane varchar, lane varchar, metric varchar,
        n_pairs bigint, mean_diff double, t_stat double, p_value double, p_adjusted double,
        correction varchar, family_size bigint, significant boolean, direction varchar
    """,
    "fct_qa_breakdowns": """
        run_id varchar, lane varchar, grader_id varchar, dimension varchar, value varchar,
        n_questions bigint, strict_accuracy double
    """,
    "fct_series_accuracy": """
        series varchar, lane varchar, grader_id varchar, run_index bigint, run_id varchar,
        strict_accuracy double, delta_vs_previous double, within_noise_band boolean
    """,
    "series_summary": """
        series varchar, lane varchar, grader_id varchar, n_runs bigint, accuracies double[],
        mean_accuracy double, min_accuracy double, max_accuracy double, range_points double,
        noise_band_points double
    """,
}

SERIES = "pyref-weekly"
BASELINE = "local-bm25"
LANES = (
    SystemRef(name="local-bm25", version="1", settings={"k1": 1.2, "b": 0.75}),
    SystemRef(name="brave_search", version="v1", settings={"count": 10}),
    SystemRef(name="tavily_search_basic", version="v1", settings={"search_depth": "basic"}),
)
PROVIDERS = {"local-bm25": "local", "brave_search": "brave", "tavily_search_basic": "tavily"}
# What qa_leaderboard joins: the lane_prices seed (itself held against the lane registry by
# tests/dbt_qa/test_qa_prices.py), read rather than re-listed.
_PRICE_SEED = Path(__file__).resolve().parents[2] / "dbt_project" / "seeds" / "lane_prices.csv"
with _PRICE_SEED.open(newline="") as _handle:
    _SEED_ROWS = {row["lane"]: row for row in csv.DictReader(_handle)}
PRICES = {
    lane.name: (float(_SEED_ROWS[lane.name]["usd_per_1k"]), _SEED_ROWS[lane.name]["basis"])
    for lane in LANES
}
PRICE_SNAPSHOT_DATE = _SEED_ROWS["brave_search"]["price_snapshot_date"]
BASE_LATENCY_MS = {"local-bm25": 12.0, "brave_search": 850.0, "tavily_search_basic": 2100.0}
GRADER_MODEL = "gpt-4.1-2025-04-14"
GRADER_ID = f"simpleqa-official@{sha256_hex('simpleqa grader template')[:8]}:{GRADER_MODEL}"
JUDGE_ID = "umbrela@1:offline"
RELEVANCE_THRESHOLD = 2
BOOTSTRAP_SEED, BOOTSTRAP_SAMPLES = 20261130, 1000
NOISE_BAND_POINTS = 0.4
CORRECTION = "bonferroni"
METRICS = ("accuracy", "ndcg_10", "recall_10", "mrr", "llm_hit_10")
N_CHUNKS = 6
MEAN_METRICS = (
    "ndcg_5", "ndcg_10", "recall_5", "recall_10", "mrr", "hit_10", "llm_hit_10",
    "llm_precision_10",
)  # fmt: skip


@dataclass(frozen=True)
class Question:
    problem: str
    gold: str
    wrong: str
    topic: str
    answer_type: str
    gold_url: str


QUESTIONS = (
    Question(
        "Which exception does the raise statement raise when there is no active exception?",
        "RuntimeError",
        "ValueError",
        "statements",
        "Other",
        "https://pyref-daily.example/reference/raise",
    ),
    Question(
        "Which exception does a failing assert statement raise?",
        "AssertionError",
        "AssertError",
        "statements",
        "Other",
        "https://pyref-daily.example/reference/assert",
    ),
    Question(
        "In which Python version were coroutine function definitions new?",
        "3.5",
        "3.7",
        "coroutines",
        "Number",
        "https://pyref-daily.example/reference/async",
    ),
    Question(
        "In which year was PEP 8 first published?",
        "2001",
        "1999",
        "history",
        "Date",
        "https://pyref-daily.example/history/pep8",
    ),
    Question(
        "Who created the Python programming language?",
        "Guido van Rossum",
        "Tim Peters",
        "history",
        "Person",
        "https://pyref-daily.example/history/creator",
    ),
)

# Per run, per lane, per question: C correct, I incorrect, N not attempted, F never landed.
LABELS = {
    1: {"local-bm25": "CICNC", "brave_search": "CCCIC", "tavily_search_basic": "CIFCC"},
    2: {"local-bm25": "CICNC", "brave_search": "CCCCC", "tavily_search_basic": "CCICC"},
}
GRADES = {"C": ("A", "correct"), "I": ("B", "incorrect"), "N": ("C", "not_attempted")}
MALICIOUS_AT = (1, "brave_search", 0)  # run index, lane, question index


def _item_id(position: int, question: Question) -> str:
    return f"demo-{position:04d}-{sha256_hex(question.problem)[:12]}"


def _gold_rank(code: str, question_index: int, lane_index: int) -> int | None:
    """Where the gold URL sits in the lane's ranked chunks (None: not retrieved)."""
    if code == "C":
        return (question_index + lane_index) % 3 + 1
    if code == "N":
        return N_CHUNKS
    return None


def _retrieval(rank: int | None, grades: list[int]) -> dict[str, float]:
    """Methodology 2.4 with a single gold URL (IDCG = 1)."""
    gain = 1 / math.log2(rank + 1) if rank else 0.0
    top10 = grades[:10]
    relevant = [g >= RELEVANCE_THRESHOLD for g in top10]
    return {
        "ndcg_5": gain if rank and rank <= 5 else 0.0,
        "ndcg_10": gain if rank and rank <= 10 else 0.0,
        "recall_5": 1.0 if rank and rank <= 5 else 0.0,
        "recall_10": 1.0 if rank and rank <= 10 else 0.0,
        "mrr": 1 / rank if rank else 0.0,
        "hit_5": 1.0 if rank and rank <= 5 else 0.0,
        "hit_10": 1.0 if rank and rank <= 10 else 0.0,
        "llm_hit_10": 1.0 if any(relevant) else 0.0,
        "llm_precision_10": sum(relevant) / len(top10) if top10 else 0.0,
    }


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = q * (len(ordered) - 1)
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


# --- building the rows --------------------------------------------------------------------------


@dataclass
class QaFixture:
    """What the QA fixture holds, for tests that want fixture-specific expectations."""

    serve_db: Path
    run_ids: list[str]  # run index 1, run index 2
    series: str
    lanes: list[str]
    baseline: str
    grader_id: str
    questions: list[str]  # item ids in sample order
    malicious: dict[str, str]  # run, lane, item whose grader completion carries MALICIOUS
    failed: dict[str, str]  # run, lane, item whose search never landed
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _qa_rows(tables: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    dataset = DatasetRef(
        name="demo-questions",
        uri="file://collectors/qa/demo_questions.jsonl",
        sha256=sha256_hex("demo questions fixture"),
        item_count=len(QUESTIONS),
    )
    item_ids = [_item_id(i, q) for i, q in enumerate(QUESTIONS)]
    run_ids: list[str] = []
    for run_index in (1, 2):
        spec = {
            "benchmark": "qa",
            "dataset": dataset.model_dump(),
            "lanes": [lane.model_dump() for lane in LANES],
            "grader": GRADER_ID,
            "series": SERIES,
            "run_index": run_index,
        }
        spec_sha256 = canonical_sha256(spec)
        run_id = run_id_for(spec_sha256)
        run_ids.append(run_id)
        started_at = f"2026-12-0{run_index}T08:00:00"
        clock = iter(range(100_000))
        envelopes: list[Envelope] = []

        def emit(
            payload: Payload, _run_id=run_id, _envelopes=envelopes, _clock=clock, _at=started_at
        ) -> Envelope:
            envelope = make_event(
                payload,
                run_id=_run_id,
                producer=PRODUCER,
                occurred_at=f"{_at}.{next(_clock):04d}00Z",
            )
            _envelopes.append(envelope)
            return envelope

        argv = ["bench", "run", "qa", "--questions", "demo", "--series", SERIES]
        started = emit(
            RunStarted(
                benchmark="qa",
                spec=spec,
                spec_sha256=spec_sha256,
                dataset=dataset,
                systems=list(LANES),
                seed=0,
                argv=argv,
                series=SERIES,
                run_index=run_index,
            )
        )
        for position, (item_id, question) in enumerate(zip(item_ids, QUESTIONS, strict=True)):
            emit(
                QuestionRegistered(
                    item_id=item_id,
                    dataset_sha256=dataset.sha256,
                    row_position=position,
                    sample_order=position,
                    problem=question.problem,
                    gold_answer=question.gold,
                    gold_urls_raw=[question.gold_url],
                    topic=question.topic,
                    answer_type=question.answer_type,
                )
            )
        answers: list[dict[str, Any]] = []
        n_completed = n_failed = 0
        for lane_index, lane in enumerate(LANES):
            for position, (item_id, question) in enumerate(zip(item_ids, QUESTIONS, strict=True)):
                code = LABELS[run_index][lane.name][position]
                answers.append(
                    _answer_row(
                        emit, run_id, run_index, dataset, lane, lane_index, position, item_id,
                        question, code,
                    )
                )  # fmt: skip
                if code == "F":
                    n_failed += 1
                else:
                    n_completed += 1
        emit(
            RunFinished(
                terminal_events=n_completed + n_failed,
                completed=n_completed,
                failed=n_failed,
                duration_s=12.5,
            )
        )
        _add_events(tables, envelopes, f"2026120{run_index}T080000Z-5151-qa{run_index}.jsonl")
        tables["fct_qa_answers"].extend(answers)
        tables["dim_runs"].append(
            {
                "run_id": run_id,
                "benchmark": "qa",
                "run_source": "engine",
                "dataset_name": dataset.name,
                "dataset_uri": dataset.uri,
                "dataset_sha256": dataset.sha256,
                "dataset_item_count": dataset.item_count,
                "systems": json.dumps([lane.model_dump() for lane in LANES]),
                "spec": json.dumps(spec),
                "spec_sha256": spec_sha256,
                "seed": 0,
                "argv": json.dumps(argv),
                "started_at": started.occurred_at,
                "finished_at": envelopes[-1].occurred_at,
                "status": "finished",
                "package_version": PRODUCER.package_version,
                "git_sha": PRODUCER.git_sha,
                "config_sha256": PRODUCER.config_sha256,
                "n_items_registered": len(QUESTIONS),
                "n_completed": n_completed,
                "n_failed": n_failed,
                "run_started_event_id": started.event_id,
            }
        )
        _aggregate(tables, run_id, answers)
    _series(tables)
    return {"run_ids": run_ids, "item_ids": item_ids}


def _answer_row(
    emit, run_id, run_index, dataset, lane, lane_index, position, item_id, question, code
) -> dict[str, Any]:
    provider = PROVIDERS[lane.name]
    planted = (run_index, lane.name, position) == MALICIOUS_AT
    request = RecordedRequest(
        method="GET",
        url=f"https://search.{provider}.example/v1/search?q={position}",
        headers={"Authorization": "[REDACTED]"},
    )
    latency = BASE_LATENCY_MS[lane.name] + 37 * position + 11 * run_index
    row: dict[str, Any] = {
        "run_id": run_id,
        "benchmark": "qa",
        "series": SERIES,
        "run_index": run_index,
        "lane": lane.name,
        "dataset_sha256": dataset.sha256,
        "item_id": item_id,
        "row_position": position,
        "sample_order": position,
        "topic": question.topic,
        "answer_type": question.answer_type,
        "problem": question.problem,
        "gold_answer": question.gold,
        "attempt": 1,
        "url_normalizer_version": "1",
        "relevance_threshold": RELEVANCE_THRESHOLD,
        "queue_wait_ms": 5.0,
        "grader_id": None,
        "grader_official": None,
    }
    if code == "F":
        failed = emit(
            ProviderCallFailed(
                lane=lane.name,
                provider=provider,
                stage="search",
                item_id=item_id,
                attempt=1,
                request=request,
                error_class="timeout",
                error_message="read timed out after 30.0 s (3 attempts)",
                landed=False,
                timings=CallTimings(queue_wait_ms=5.0, round_trip_ms=None, whole_call_ms=30_000.0),
                http_attempts=3,
                concurrency=2,
            )
        )
        none = dict.fromkeys(
            ("answer", "grade", "label", "grade_parse_ok", "n_chunks", "round_trip_ms",
             "ndcg_5", "ndcg_10", "recall_5", "recall_10", "mrr", "hit_5", "hit_10",
             "llm_hit_10", "llm_precision_10", "chunks_event_id", "answer_event_id",
             "grade_event_id")
        )  # fmt: skip
        return (
            row
            | none
            | {
                "outcome": "failed",
                "landed": False,
                "whole_call_ms": 30_000.0,
                "search_event_id": failed.event_id,
            }
        )

    rank = _gold_rank(code, position, lane_index)
    chunks = [
        Chunk(
            rank=r,
            url=question.gold_url
            if r == rank
            else f"https://{provider}.example/page/{position}/{r}",
            title=f"{question.topic} reference {r}",
            text=(question.problem + " " + question.gold) if r == rank else f"Unrelated text {r}.",
        )
        for r in range(1, N_CHUNKS + 1)
    ]
    body: dict[str, Any] = {
        "results": [{"url": c.url, "title": c.title, "description": c.text} for c in chunks]
    }
    if planted:
        body["results"][0]["description"] = MALICIOUS
    search = emit(
        ProviderCallCompleted(
            lane=lane.name,
            provider=provider,
            stage="search",
            item_id=item_id,
            attempt=1,
            request=request,
            status_code=200,
            response_headers={"content-type": "application/json"},
            raw_body=json.dumps(body, indent=2),
            timings=CallTimings(
                queue_wait_ms=5.0, round_trip_ms=latency, whole_call_ms=latency + 20
            ),
            http_attempts=1,
            concurrency=2,
        )
    )
    normalized = emit(
        ChunksNormalized(
            lane=lane.name,
            item_id=item_id,
            attempt=1,
            normalizer_version="1",
            source_event_id=search.event_id,
            chunks=chunks,
        )
    )
    grades = []
    for chunk in chunks:
        grade = 3 if chunk.rank == rank else (1 if chunk.rank % 2 else 0)
        grades.append(grade)
        emit(
            RelevanceGraded(
                lane=lane.name,
                item_id=item_id,
                attempt=1,
                rank=chunk.rank,
                judge_id=JUDGE_ID,
                grade=grade,
                parse_ok=True,
                source_event_id=normalized.event_id,
            )
        )
    answer_text = {
        "C": question.gold,
        "I": question.wrong,
        "N": "I cannot tell from the results.",
    }[code]
    answer = emit(
        AnswerSynthesized(
            lane=lane.name,
            item_id=item_id,
            attempt=1,
            outcome="answered",
            answer=answer_text,
            chunk_ranks_used=[c.rank for c in chunks],
            source_event_ids=[normalized.event_id],
            llm=LlmCallRecord(
                provider="offline",
                model="offline-extractive@1",
                prompt_id="qa-synthesize",
                prompt_sha256=sha256_hex("qa-synthesize prompt"),
                raw_completion=answer_text,
            ),
        )
    )
    grade, label = GRADES[code]
    completion = f"{grade}\n{MALICIOUS}" if planted else grade
    graded = emit(
        AnswerGraded(
            lane=lane.name,
            item_id=item_id,
            attempt=1,
            grader_id=GRADER_ID,
            official=True,
            grade=grade,
            label=label,
            parse_ok=True,
            source_event_id=answer.event_id,
            llm=LlmCallRecord(
                provider="openai",
                model=GRADER_MODEL,
                temperature=0.5,
                max_tokens=2048,
                prompt_id="simpleqa-grader",
                prompt_sha256=sha256_hex("simpleqa grader template"),
                raw_completion=completion,
            ),
        )
    )
    return (
        row
        | _retrieval(rank, grades)
        | {
            "outcome": "answered",
            "landed": True,
            "answer": answer_text,
            "grade": grade,
            "label": label,
            "grader_id": GRADER_ID,
            "grader_official": True,
            "grade_parse_ok": True,
            "n_chunks": len(chunks),
            "round_trip_ms": latency,
            "whole_call_ms": latency + 20,
            "search_event_id": search.event_id,
            "chunks_event_id": normalized.event_id,
            "answer_event_id": answer.event_id,
            "grade_event_id": graded.event_id,
        }
    )


def _metric_value(row: dict[str, Any], metric: str) -> float:
    if metric == "accuracy":
        return 1.0 if row["label"] == "correct" else 0.0
    return float(row[metric] or 0.0)


def _significance(run_id: str, answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Methodology 2.6: paired t-test vs the baseline on questions both landed, Bonferroni."""
    by_lane = {
        lane.name: {r["item_id"]: r for r in answers if r["lane"] == lane.name} for lane in LANES
    }
    family = len(LANES) - 1
    rows = []
    for lane in LANES:
        if lane.name == BASELINE:
            continue
        base, other = by_lane[BASELINE], by_lane[lane.name]
        paired = [i for i in base if i in other and base[i]["landed"] and other[i]["landed"]]
        for metric in METRICS:
            a = [_metric_value(other[i], metric) for i in paired]
            b = [_metric_value(base[i], metric) for i in paired]
            diffs = [x - y for x, y in zip(a, b, strict=True)]
            mean_diff = round(_mean(diffs) or 0.0, 12)  # no -0.0000 from float noise
            if len(set(diffs)) <= 1:  # identical vectors (or a constant shift): no variance
                t_stat, p_value = (None, 1.0) if mean_diff == 0 else (None, 0.0)
            else:
                result = stats.ttest_rel(a, b)
                t_stat, p_value = float(result.statistic), float(result.pvalue)
            p_adjusted = min(1.0, p_value * family)
            rows.append(
                {
                    "run_id": run_id,
                    "grader_id": GRADER_ID,
                    "baseline_lane": BASELINE,
                    "lane": lane.name,
                    "metric": metric,
                    "n_pairs": len(paired),
                    "mean_diff": mean_diff,
                    "t_stat": t_stat,
                    "p_value": p_value,
                    "p_adjusted": p_adjusted,
                    "correction": CORRECTION,
                    "family_size": family,
                    "significant": p_adjusted < 0.05,
                    "direction": "better"
                    if mean_diff > 0
                    else "worse"
                    if mean_diff < 0
                    else "same",
                }
            )
    return rows


def _aggregate(tables, run_id: str, answers: list[dict[str, Any]]) -> None:
    significance = _significance(run_id, answers)
    tables["fct_qa_significance"].extend(significance)
    accuracy_p = {r["lane"]: r["p_adjusted"] for r in significance if r["metric"] == "accuracy"}
    for lane in LANES:
        rows = [r for r in answers if r["lane"] == lane.name]
        landed = [r for r in rows if r["landed"]]
        labels = [r["label"] for r in landed]
        n = len(labels)
        c, i, na = (labels.count(k) for k in ("correct", "incorrect", "not_attempted"))
        is_correct = c / n if n else None
        aga = c / (c + i) if c + i else 0.0
        f1 = 2 * is_correct * aga / (is_correct + aga) if is_correct and is_correct + aga else 0.0
        rng = random.Random(BOOTSTRAP_SEED)
        draws = sorted(
            sum(rng.choice(labels) == "correct" for _ in labels) / n
            for _ in range(BOOTSTRAP_SAMPLES)
        )
        latencies = [r["round_trip_ms"] for r in landed]
        usd_per_1k, basis = PRICES[lane.name]
        first = rows[0]
        tables["qa_leaderboard"].append(
            {
                "run_id": run_id,
                "benchmark": "qa",
                "series": SERIES,
                "run_index": first["run_index"],
                "lane": lane.name,
                "grader_id": GRADER_ID,
                "grader_official": True,
                "n_questions": len(rows),
                "n_landed": n,
                "n_failed": len(rows) - n,
                "failure_rate": (len(rows) - n) / len(rows),
                "strict_accuracy": is_correct,
                "strict_accuracy_ci_low": _percentile(draws, 0.025),
                "strict_accuracy_ci_high": _percentile(draws, 0.975),
                "is_correct": is_correct,
                "is_incorrect": i / n,
                "is_not_attempted": na / n,
                "accuracy_given_attempted": aga,
                "f1": f1,
                **{m: _mean([r[m] for r in landed]) for m in MEAN_METRICS},
                "latency_p50_ms": _percentile(latencies, 0.5),
                "latency_p95_ms": _percentile(latencies, 0.95),
                "usd_per_1k": usd_per_1k,
                "run_cost_usd": usd_per_1k * len(rows) / 1000,
                "price_snapshot_date": PRICE_SNAPSHOT_DATE,
                "price_basis": basis,
                "baseline_lane": BASELINE,
                "accuracy_p_adjusted": accuracy_p.get(lane.name),
                "bootstrap_seed": BOOTSTRAP_SEED,
                "event_ids": [r["grade_event_id"] for r in landed],
            }
        )
        for dimension in ("topic", "answer_type"):
            for value in sorted({r[dimension] for r in rows}):
                group = [r for r in rows if r[dimension] == value]
                graded = [r for r in group if r["landed"]]
                tables["fct_qa_breakdowns"].append(
                    {
                        "run_id": run_id,
                        "lane": lane.name,
                        "grader_id": GRADER_ID,
                        "dimension": dimension,
                        "value": value,
                        "n_questions": len(group),
                        "strict_accuracy": (
                            sum(r["label"] == "correct" for r in graded) / len(graded)
                            if graded
                            else None
                        ),
                    }
                )


def _series(tables) -> None:
    """Methodology 3: accuracy per run, delta vs the previous run, ±noise band, mean and range."""
    for lane in LANES:
        rows = sorted(
            (r for r in tables["qa_leaderboard"] if r["lane"] == lane.name),
            key=lambda r: r["run_index"],
        )
        previous = None
        for row in rows:
            delta = None if previous is None else row["strict_accuracy"] - previous
            tables["fct_series_accuracy"].append(
                {
                    "series": SERIES,
                    "lane": lane.name,
                    "grader_id": GRADER_ID,
                    "run_index": row["run_index"],
                    "run_id": row["run_id"],
                    "strict_accuracy": row["strict_accuracy"],
                    "delta_vs_previous": delta,
                    "within_noise_band": (
                        None if delta is None else abs(delta * 100) <= NOISE_BAND_POINTS
                    ),
                }
            )
            previous = row["strict_accuracy"]
        accuracies = [r["strict_accuracy"] for r in rows]
        tables["series_summary"].append(
            {
                "series": SERIES,
                "lane": lane.name,
                "grader_id": GRADER_ID,
                "n_runs": len(rows),
                "accuracies": accuracies,
                "mean_accuracy": _mean(accuracies),
                "min_accuracy": min(accuracies),
                "max_accuracy": max(accuracies),
                "range_points": (max(accuracies) - min(accuracies)) * 100,
                "noise_band_points": NOISE_BAND_POINTS,
            }
        )


# --- writing the snapshot -------------------------------------------------------------------------


def _write(target: Path, tables: dict[str, list[dict[str, Any]]], ddl: dict[str, str]) -> Path:
    """Write the tables beside `target` and swap them in, as `warehouse.publish` does."""
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f".{target.name}.qa-fixture-{os.getpid()}")
    scratch.unlink(missing_ok=True)
    try:
        with duckdb.connect(str(scratch)) as con:
            con.execute("create schema marts")
            for name, columns in ddl.items():
                con.execute(f"create table marts.{name} ({columns})")
                names = [c[0] for c in con.execute(f"describe marts.{name}").fetchall()]
                rows = tables.get(name, [])
                if rows:  # one bulk insert through a DataFrame: executemany is slow
                    frame = pd.DataFrame([[row[n] for n in names] for row in rows], columns=names)
                    con.register("fixture_rows", frame)
                    con.execute(f"insert into marts.{name} select * from fixture_rows")
                    con.unregister("fixture_rows")
            con.execute("create table main._publish (published_at varchar, metadata json)")
            con.execute(
                "insert into main._publish values (?, ?)",
                ["2026-12-02T09:00:00+00:00", json.dumps({"source": Path(__file__).name})],
            )
        os.replace(scratch, target)
    finally:
        scratch.unlink(missing_ok=True)
    return target


def build_qa_fixture_snapshot(path: str | Path) -> QaFixture:
    """Publish the extraction fixture plus the QA marts to `path` (a file or a BENCH_HOME)."""
    target = _target(path)
    tables, _facts = _rows()
    tables |= {name: [] for name in QA_DDL}
    facts = _qa_rows(tables)
    _write(target, tables, DDL | QA_DDL)
    run1, _run2 = facts["run_ids"]
    items = facts["item_ids"]
    return QaFixture(
        serve_db=target,
        run_ids=facts["run_ids"],
        series=SERIES,
        lanes=[lane.name for lane in LANES],
        baseline=BASELINE,
        grader_id=GRADER_ID,
        questions=items,
        malicious={"run": run1, "lane": MALICIOUS_AT[1], "item": items[MALICIOUS_AT[2]]},
        failed={"run": run1, "lane": "tavily_search_basic", "item": items[2]},
        tables=tables,
    )


def build_qa_empty_snapshot(path: str | Path) -> Path:
    """The extraction fixture with the QA marts created but empty (a QA build with no runs)."""
    tables, _facts = _rows()
    return _write(_target(path), tables, DDL | QA_DDL)


if __name__ == "__main__":  # a manual look: python tests/app/fixture_qa_snapshot.py DIR
    import sys

    fixture = build_qa_fixture_snapshot(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".bench"))
    print(fixture.serve_db)
