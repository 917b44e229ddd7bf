"""A small serving snapshot that matches docs/warehouse-contract.md exactly.

`build_fixture_snapshot(path)` writes the five published marts (plus the `main._publish` row that
`warehouse.publish` adds) into a scratch file and swaps it onto `path`, so the app tests read a file
shaped like a real `serve.duckdb`. The rows are internally consistent:
envelopes come from `warehouse.events.make_event` (real ids, content hashes, a hash chain per
segment), page metrics from a plain re-statement of the methodology formulas, and leaderboard
rows aggregate the page rows with the default dbt vars.

Two runs, three systems. Run 1 (finished) has a failed item and an item whose ground truth and
extractor outputs carry an HTML/JS payload; run 2 (in progress) has a missing page and a
non-content page.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from warehouse.canonical import canonical_json, canonical_sha256, sha256_hex
from warehouse.events import (
    DatasetRef,
    Envelope,
    ExtractionCompleted,
    ExtractionFailed,
    ItemRegistered,
    Payload,
    Producer,
    RunFinished,
    RunStarted,
    SystemRef,
    make_event,
)
from warehouse.ids import run_id_for
from warehouse.log import genesis_sha256

MALICIOUS = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned2'\">"

WEIGHTS = {
    "completeness": 0.40,
    "success": 0.30,
    "f1": 0.20,
    "latency": 0.05,
    "throughput": 0.05,
}
SCORING_VARS: dict[str, Any] = {
    "extraction_weights": WEIGHTS,
    "useful_success_threshold": 0.3,
    "bootstrap_seed": 20261130,
    "bootstrap_samples": 1000,
    "latency_scale_s": 10,
    "throughput_full_bytes": 100000,
    "non_content_rules_version": "1",
}

SYSTEMS = (
    SystemRef(name="trafilatura", version="2.0.0", settings={"favor_precision": True}),
    SystemRef(name="readability-lxml", version="0.8.4.1"),
    SystemRef(name="html-text", version="0.7.0", settings={"guess_layout": True}),
)

PRODUCER = Producer(
    package_version="0.1.0",
    git_sha="3f9c2e1a7b5d4c6e8f0a1b2c3d4e5f60718293a4",
    config_sha256=canonical_sha256({"fixture": "app-tests"}),
)

# --- the published tables, column for column as in docs/warehouse-contract.md --------------

DDL = {
    "extraction_leaderboard": """
        run_id varchar, run_source varchar, dataset_name varchar, dataset_sha256 varchar,
        system varchar, system_version varchar,
        n_items bigint, n_completed bigint, n_failed bigint,
        shingle_precision double, shingle_recall double, shingle_f1 double, shingle_accuracy double,
        shingle_precision_std double, shingle_recall_std double, shingle_f1_std double,
        shingle_accuracy_std double, bootstrap_seed bigint, bootstrap_samples bigint,
        completeness double, raw_success_rate double, useful_success_rate double, token_f1 double,
        latency_p95_s double, avg_output_bytes double,
        latency_score double, throughput_score double, composite double,
        seed_composite double, composite_is_seed boolean, tie_note varchar,
        w_completeness double, w_success double, w_f1 double, w_latency double,
        w_throughput double, w_shingle_precision double, w_shingle_recall double,
        w_shingle_f1 double, useful_success_threshold double,
        rank_composite bigint, rank_seed_composite bigint, rank_shingle_f1 bigint,
        event_ids varchar[]
    """,
    "fct_extraction_pages": """
        run_id varchar, dataset_sha256 varchar, system varchar, system_version varchar,
        item_id varchar, position bigint, url varchar, outcome varchar, attempt bigint,
        output_text varchar, output_bytes bigint, latency_ms double,
        error_class varchar, error_message varchar,
        truth_tokens bigint, output_tokens bigint, tp double, fp double, fn double,
        page_precision double, page_recall double, exact_match boolean,
        anchors_total bigint, anchors_found bigint, completeness double,
        token_recall double, window_precision double, token_f1 double,
        raw_success boolean, non_content boolean, useful_success boolean,
        item_event_id varchar, extraction_event_id varchar, extraction_content_sha256 varchar
    """,
    "dim_runs": """
        run_id varchar, benchmark varchar, run_source varchar, dataset_name varchar,
        dataset_uri varchar, dataset_sha256 varchar, dataset_item_count bigint,
        systems json, spec json, spec_sha256 varchar, seed bigint, argv json,
        started_at timestamptz, finished_at timestamptz, status varchar,
        package_version varchar, git_sha varchar, config_sha256 varchar,
        n_items_registered bigint, n_completed bigint, n_failed bigint,
        run_started_event_id varchar
    """,
    "dim_events": """
        event_id varchar, event_type varchar, schema_version bigint,
        stored_schema_version bigint, run_id varchar, occurred_at timestamptz,
        segment varchar, line_no bigint, content_sha256 varchar, prev_sha256 varchar,
        producer json, payload json
    """,
    "dim_scoring_vars": "var_name varchar, var_value json",
}

# --- what the runs saw ------------------------------------------------------------------------


@dataclass(frozen=True)
class ItemSpec:
    item_id: str
    url: str
    truth: str
    anchors: tuple[str, ...]
    # system -> ("completed", output_text, latency_ms) | ("failed", error_class, message, ms)
    #           | ("missing",)
    outcomes: dict[str, tuple[Any, ...]]
    non_content: frozenset[str] = frozenset()


RIVER = (
    "The city council approved the river restoration plan on Tuesday. Engineers will remove "
    "two concrete weirs and replant three kilometres of bank with willow and alder. Work "
    "starts in spring and should take eighteen months."
)
BREAD = (
    "Mix the flour, water and salt, then rest the dough for thirty minutes. Fold it four "
    "times over two hours. Shape a round loaf and bake at 240 degrees for forty minutes."
)
COMET = (
    "Astronomers tracked the comet for six weeks as it brightened near the sun. Its tail "
    "stretched across two degrees of sky, and amateur observers sent more than nine hundred "
    "photographs to the survey."
)
NOTICE = (
    "Security advisory for site editors. The comment form stored this text verbatim: "
    f"{MALICIOUS} Patch the template escaping before Friday."
)
NAV = "Home | News | Sport | Weather | Sign in | Subscribe"
FOOTER = "Cookie settings. Privacy policy. All rights reserved."

RUN1_ITEMS = (
    ItemSpec(
        "aeb-0001",
        "https://news.example.org/river-restoration",
        RIVER,
        ("remove two concrete weirs", "eighteen months"),
        {
            "trafilatura": ("completed", RIVER, 412.0),
            "readability-lxml": ("completed", "River plan. " + RIVER, 655.0),
            "html-text": ("completed", f"{NAV} {RIVER} {FOOTER}", 95.0),
        },
    ),
    ItemSpec(
        "aeb-0002",
        "https://food.example.org/simple-loaf",
        BREAD,
        ("rest the dough for thirty minutes", "bake at 240 degrees"),
        {
            "trafilatura": ("completed", BREAD.replace(" Shape a round loaf", ""), 388.0),
            "readability-lxml": ("completed", BREAD + " Related recipes: focaccia, naan.", 702.0),
            "html-text": ("completed", f"{NAV} {BREAD} {FOOTER} {NAV}", 88.0),
        },
    ),
    ItemSpec(
        "aeb-0003",
        "https://science.example.org/comet-survey",
        COMET,
        ("tracked the comet for six weeks", "nine hundred photographs"),
        {
            "trafilatura": ("completed", COMET, 530.0),
            "readability-lxml": (
                "failed",
                "lxml.etree.ParserError",
                "Document is empty",
                41.0,
            ),
            "html-text": ("completed", f"{NAV} {COMET[:120]} {FOOTER}", 102.0),
        },
    ),
    ItemSpec(
        "aeb-0004",
        "https://forum.example.org/advisory",
        NOTICE,
        ("stored this text verbatim", "Patch the template escaping"),
        {
            "trafilatura": ("completed", NOTICE, 447.0),
            "readability-lxml": ("completed", "Advisory. " + NOTICE, 610.0),
            "html-text": ("completed", f"{NAV} {NOTICE} {FOOTER}", 91.0),
        },
    ),
)

HARBOUR = (
    "The harbour authority extended the ferry timetable for the summer season. Boats now "
    "leave every twenty minutes between seven and nine in the evening."
)
LIBRARY = (
    "The new public library opens with forty thousand books, a maker space and a reading "
    "garden on the roof. Membership is free for residents."
)
MARKET = (
    "Farmers at the Saturday market reported record sales of heritage apples, with twelve "
    "varieties on sale and queues before eight in the morning."
)
RUN2_ITEMS = (
    ItemSpec(
        "live-0001",
        "https://harbour.example.net/ferries",
        HARBOUR,
        ("every twenty minutes", "summer season"),
        {
            "trafilatura": ("completed", HARBOUR, 1210.0),
            "readability-lxml": ("completed", HARBOUR + " Share this page.", 1630.0),
            "html-text": ("completed", f"{NAV} {HARBOUR}", 820.0),
        },
    ),
    ItemSpec(
        "live-0002",
        "https://library.example.net/opening",
        LIBRARY,
        ("forty thousand books", "reading garden on the roof"),
        {
            "trafilatura": ("completed", "Access denied. Please verify you are human.", 950.0),
            "readability-lxml": ("completed", LIBRARY, 1480.0),
            "html-text": ("completed", f"{LIBRARY} {FOOTER}", 760.0),
        },
        non_content=frozenset({"trafilatura"}),
    ),
    ItemSpec(
        "live-0003",
        "https://market.example.net/apples",
        MARKET,
        ("heritage apples", "twelve varieties"),
        {
            "trafilatura": ("completed", MARKET, 1105.0),
            "readability-lxml": ("failed", "httpx.ReadTimeout", "timed out after 30.0 s", 30000.0),
            "html-text": ("missing",),
        },
    ),
)


@dataclass(frozen=True)
class RunSpec:
    dataset: DatasetRef
    items: tuple[ItemSpec, ...]
    started_at: str
    finished: bool
    segment: str
    argv: tuple[str, ...]


RUNS = (
    RunSpec(
        DatasetRef(
            name="article-extraction-benchmark",
            uri="file://../shared/data/article-extraction-benchmark",
            sha256=sha256_hex("article-extraction-benchmark fixture"),
            item_count=len(RUN1_ITEMS),
            revision="4a3bc979",
        ),
        RUN1_ITEMS,
        "2026-11-30T09:00:00",
        True,
        "20261130T090000Z-4242-a1b2c3.jsonl",
        ("bench", "run", "extraction", "--dataset", "article-extraction-benchmark", "--limit", "4"),
    ),
    RunSpec(
        DatasetRef(
            name="live-url-sample",
            uri="file://benchmarks/extraction/live-url-sample.jsonl",
            sha256=sha256_hex("live-url-sample fixture"),
            item_count=len(RUN2_ITEMS),
        ),
        RUN2_ITEMS,
        "2026-11-30T10:00:00",
        False,
        "20261130T100000Z-4343-d4e5f6.jsonl",
        ("bench", "run", "extraction", "--dataset", "live-url-sample"),
    ),
)


# --- the scoring rules, stated plainly (methodology section 4) --------------------------------

_WORD = re.compile(r"\w+")


def _tokens(text: str | None) -> list[str]:
    return _WORD.findall(text or "")


def _shingles(tokens: list[str], n: int = 4) -> Counter[tuple[str, ...]]:
    if not tokens:
        return Counter()
    if len(tokens) < n:
        return Counter([tuple(tokens)])
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _normalise(text: str) -> str:
    return " ".join(text.split())


def page_metrics(truth: str, anchors: tuple[str, ...], output: str | None) -> dict[str, Any]:
    truth_tokens, output_tokens = _tokens(truth), _tokens(output)
    predicted, expected = _shingles(output_tokens), _shingles(truth_tokens)
    tp = sum((predicted & expected).values())
    fp = sum(predicted.values()) - tp
    fn = sum(expected.values()) - tp
    total = tp + fp + fn
    if fp == 0 and fn == 0:
        precision = recall = 1.0
    else:
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
    found = sum(1 for a in anchors if _normalise(a) in _normalise(output or ""))
    truth_bag = Counter(truth_tokens)
    token_recall = (
        sum((Counter(output_tokens) & truth_bag).values()) / len(truth_tokens)
        if truth_tokens
        else 0.0
    )
    width = max(len(truth_tokens), 1)
    windows = [output_tokens[i : i + width] for i in range(max(len(output_tokens) - width, 0) + 1)]
    window_precision = max(
        (sum((Counter(w) & truth_bag).values()) / len(w) for w in windows if w), default=0.0
    )
    return {
        "truth_tokens": len(truth_tokens),
        "output_tokens": len(output_tokens),
        "tp": tp / total if total else 0.0,
        "fp": fp / total if total else 0.0,
        "fn": fn / total if total else 0.0,
        "has_predicted": tp + fp > 0,
        "has_expected": tp + fn > 0,
        "page_precision": precision,
        "page_recall": recall,
        "exact_match": output_tokens == truth_tokens,
        "anchors_total": len(anchors),
        "anchors_found": found,
        "completeness": found / len(anchors) if anchors else 0.0,
        "token_recall": token_recall,
        "window_precision": window_precision,
        "token_f1": token_recall * window_precision,
    }


def _corpus_shingle_scores(pages: list[dict[str, Any]]) -> tuple[float, float, float, float]:
    precisions = [p["page_precision"] for p in pages if p["has_predicted"]]
    recalls = [p["page_recall"] for p in pages if p["has_expected"]]
    precision = sum(precisions) / len(precisions) if precisions else 0.0
    recall = sum(recalls) / len(recalls) if recalls else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    accuracy = sum(1 for p in pages if p["exact_match"]) / len(pages) if pages else 0.0
    return precision, recall, f1, accuracy


def _std(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def _bootstrap_std(pages: list[dict[str, Any]], seed: int, samples: int) -> tuple[float, ...]:
    rng = random.Random(seed)
    draws = [_corpus_shingle_scores([rng.choice(pages) for _ in pages]) for _ in range(samples)]
    return tuple(_std([d[i] for d in draws]) for i in range(4))


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    rank = 0.95 * (len(ordered) - 1)
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


# --- building the rows --------------------------------------------------------------------------


@dataclass
class FixtureSnapshot:
    """What the fixture holds, for tests that want fixture-specific expectations."""

    serve_db: Path
    run_ids: list[str]
    dataset_sha256: dict[str, str]  # dataset name -> sha256
    systems: list[str]
    malicious: dict[str, str]  # run, system, item of the item carrying MALICIOUS
    failed: dict[str, str]  # run, system, item, error_class of run 1's failed page
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _rows() -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in DDL}
    run_ids: list[str] = []
    threshold = SCORING_VARS["useful_success_threshold"]

    for run in RUNS:
        spec = {
            "benchmark": "extraction",
            "dataset": run.dataset.model_dump(),
            "systems": [s.model_dump() for s in SYSTEMS],
            "limit": len(run.items),
            "seed": 7,
        }
        spec_sha256 = canonical_sha256(spec)
        run_id = run_id_for(spec_sha256)
        run_ids.append(run_id)
        clock = iter(range(10_000))

        def stamp(_run: RunSpec = run, _clock=clock) -> str:
            return f"{_run.started_at}.{next(_clock):03d}000Z"

        envelopes: list[Envelope] = []

        def emit(payload: Payload, _run_id: str = run_id, _envelopes=envelopes) -> Envelope:
            envelope = make_event(payload, run_id=_run_id, producer=PRODUCER, occurred_at=stamp())
            _envelopes.append(envelope)
            return envelope

        started = emit(
            RunStarted(
                benchmark="extraction",
                source="engine",
                spec=spec,
                spec_sha256=spec_sha256,
                dataset=run.dataset,
                systems=list(SYSTEMS),
                seed=7,
                argv=list(run.argv),
            )
        )
        pages_by_system: dict[str, list[dict[str, Any]]] = {s.name: [] for s in SYSTEMS}
        extraction_ids: dict[str, list[str]] = {s.name: [] for s in SYSTEMS}
        n_completed = n_failed = 0
        for position, item in enumerate(run.items, start=1):
            registered = emit(
                ItemRegistered(
                    item_id=item.item_id,
                    dataset_sha256=run.dataset.sha256,
                    position=position,
                    url=item.url,
                    vertical="news",
                    ground_truth_text=item.truth,
                    anchors=list(item.anchors),
                    anchor_rule_version="1",
                    input_sha256=sha256_hex(item.url),
                    input_bytes=20_000 + 1_000 * position,
                )
            )
            for system in SYSTEMS:
                outcome = item.outcomes[system.name]
                page: dict[str, Any] = {
                    "run_id": run_id,
                    "dataset_sha256": run.dataset.sha256,
                    "system": system.name,
                    "system_version": system.version,
                    "item_id": item.item_id,
                    "position": position,
                    "url": item.url,
                    "outcome": outcome[0],
                    "item_event_id": registered.event_id,
                }
                if outcome[0] == "completed":
                    _, text, latency = outcome
                    event = emit(
                        ExtractionCompleted(
                            item_id=item.item_id,
                            system=system.name,
                            system_version=system.version,
                            settings=system.settings,
                            attempt=1,
                            source="engine",
                            render_path=None,
                            input_sha256=sha256_hex(item.url),
                            output_text=text,
                            output_bytes=len(text.encode()),
                            latency_ms=latency,
                        )
                    )
                    n_completed += 1
                    page |= {
                        "attempt": 1,
                        "output_text": text,
                        "output_bytes": len(text.encode()),
                        "latency_ms": latency,
                        "error_class": None,
                        "error_message": None,
                    }
                elif outcome[0] == "failed":
                    _, error_class, message, latency = outcome
                    event = emit(
                        ExtractionFailed(
                            item_id=item.item_id,
                            system=system.name,
                            system_version=system.version,
                            settings=system.settings,
                            attempt=1,
                            error_class=error_class,
                            error_message=message,
                            latency_ms=latency,
                        )
                    )
                    n_failed += 1
                    page |= {
                        "attempt": 1,
                        "output_text": None,
                        "output_bytes": 0,
                        "latency_ms": latency,
                        "error_class": error_class,
                        "error_message": message,
                    }
                else:
                    event = None
                    page |= {
                        "attempt": None,
                        "output_text": None,
                        "output_bytes": 0,
                        "latency_ms": None,
                        "error_class": None,
                        "error_message": None,
                    }
                metrics = page_metrics(item.truth, item.anchors, page["output_text"])
                raw_success = outcome[0] == "completed" and bool(page["output_text"])
                non_content = system.name in item.non_content
                if not raw_success:
                    metrics |= {"completeness": 0.0, "token_recall": 0.0, "token_f1": 0.0}
                page |= metrics | {
                    "raw_success": raw_success,
                    "non_content": non_content,
                    "useful_success": raw_success
                    and not non_content
                    and metrics["completeness"] >= threshold,
                    "extraction_event_id": event.event_id if event else None,
                    "extraction_content_sha256": event.content_sha256 if event else None,
                }
                pages_by_system[system.name].append(page)
                if event is not None:
                    extraction_ids[system.name].append(event.event_id)
        if run.finished:
            emit(
                RunFinished(
                    terminal_events=n_completed + n_failed,
                    completed=n_completed,
                    failed=n_failed,
                    duration_s=42.5,
                )
            )

        _add_events(tables, envelopes, run.segment)
        _add_leaderboard(tables, run, run_id, pages_by_system, extraction_ids)
        tables["fct_extraction_pages"].extend(
            {k: v for k, v in page.items() if k not in ("has_predicted", "has_expected")}
            for pages in pages_by_system.values()
            for page in pages
        )
        tables["dim_runs"].append(
            {
                "run_id": run_id,
                "benchmark": "extraction",
                "run_source": "engine",
                "dataset_name": run.dataset.name,
                "dataset_uri": run.dataset.uri,
                "dataset_sha256": run.dataset.sha256,
                "dataset_item_count": run.dataset.item_count,
                "systems": json.dumps([s.model_dump() for s in SYSTEMS]),
                "spec": json.dumps(spec),
                "spec_sha256": spec_sha256,
                "seed": 7,
                "argv": json.dumps(list(run.argv)),
                "started_at": started.occurred_at,
                "finished_at": envelopes[-1].occurred_at if run.finished else None,
                "status": "finished" if run.finished else "in_progress",
                "package_version": PRODUCER.package_version,
                "git_sha": PRODUCER.git_sha,
                "config_sha256": PRODUCER.config_sha256,
                "n_items_registered": len(run.items),
                "n_completed": n_completed,
                "n_failed": n_failed,
                "run_started_event_id": started.event_id,
            }
        )

    _rank(tables["extraction_leaderboard"])
    tables["dim_scoring_vars"] = [
        {"var_name": name, "var_value": json.dumps(value)} for name, value in SCORING_VARS.items()
    ]
    facts = {"run_ids": run_ids}
    return tables, facts


def _add_events(tables: dict[str, list[dict[str, Any]]], envelopes: list[Envelope], segment: str):
    prev = genesis_sha256(segment)
    for line_no, envelope in enumerate(envelopes, start=1):
        line = envelope.model_copy(update={"prev_sha256": prev})
        tables["dim_events"].append(
            {
                "event_id": line.event_id,
                "event_type": line.event_type,
                "schema_version": line.schema_version,
                "stored_schema_version": line.schema_version,
                "run_id": line.run_id,
                "occurred_at": line.occurred_at,
                "segment": segment,
                "line_no": line_no,
                "content_sha256": line.content_sha256,
                "prev_sha256": line.prev_sha256,
                "producer": json.dumps(line.producer.model_dump()),
                "payload": json.dumps(line.payload),
            }
        )
        prev = sha256_hex(canonical_json(line.model_dump()))


def _add_leaderboard(tables, run: RunSpec, run_id, pages_by_system, extraction_ids) -> None:
    seed, samples = SCORING_VARS["bootstrap_seed"], SCORING_VARS["bootstrap_samples"]
    for system in SYSTEMS:
        pages = pages_by_system[system.name]
        attempted = [p for p in pages if p["outcome"] != "missing"]
        successful = [p for p in pages if p["raw_success"]]
        precision, recall, f1, accuracy = _corpus_shingle_scores(pages)
        std = _bootstrap_std(pages, seed, samples)
        completeness = (
            sum(p["completeness"] for p in successful) / len(successful) if successful else 0.0
        )
        useful = sum(1 for p in pages if p["useful_success"]) / len(pages)
        token_f1 = sum(p["token_f1"] for p in pages) / len(pages)
        p95 = _p95([p["latency_ms"] / 1000 for p in attempted if p["latency_ms"] is not None])
        avg_bytes = (
            sum(p["output_bytes"] for p in successful) / len(successful) if successful else 0.0
        )
        latency_score = math.exp(-p95 / SCORING_VARS["latency_scale_s"])
        throughput_score = min(avg_bytes / SCORING_VARS["throughput_full_bytes"], 1.0)
        composite = (
            WEIGHTS["completeness"] * completeness
            + WEIGHTS["success"] * useful
            + WEIGHTS["f1"] * token_f1
            + WEIGHTS["latency"] * latency_score
            + WEIGHTS["throughput"] * throughput_score
        )
        tables["extraction_leaderboard"].append(
            {
                "run_id": run_id,
                "run_source": "engine",
                "dataset_name": run.dataset.name,
                "dataset_sha256": run.dataset.sha256,
                "system": system.name,
                "system_version": system.version,
                "n_items": len(pages),
                "n_completed": sum(1 for p in pages if p["outcome"] == "completed"),
                "n_failed": sum(1 for p in pages if p["outcome"] == "failed"),
                "shingle_precision": precision,
                "shingle_recall": recall,
                "shingle_f1": f1,
                "shingle_accuracy": accuracy,
                "shingle_precision_std": std[0],
                "shingle_recall_std": std[1],
                "shingle_f1_std": std[2],
                "shingle_accuracy_std": std[3],
                "bootstrap_seed": seed,
                "bootstrap_samples": samples,
                "completeness": completeness,
                "raw_success_rate": len(successful) / len(pages),
                "useful_success_rate": useful,
                "token_f1": token_f1,
                "latency_p95_s": p95,
                "avg_output_bytes": avg_bytes,
                "latency_score": latency_score,
                "throughput_score": throughput_score,
                "composite": composite,
                # the fixture scores with the seed weights, shingle terms at 0 (the defaults)
                "seed_composite": composite,
                "composite_is_seed": True,
                "tie_note": None,
                "w_completeness": WEIGHTS["completeness"],
                "w_success": WEIGHTS["success"],
                "w_f1": WEIGHTS["f1"],
                "w_latency": WEIGHTS["latency"],
                "w_throughput": WEIGHTS["throughput"],
                "w_shingle_precision": 0.0,
                "w_shingle_recall": 0.0,
                "w_shingle_f1": 0.0,
                "useful_success_threshold": SCORING_VARS["useful_success_threshold"],
                "rank_composite": None,
                "rank_seed_composite": None,
                "rank_shingle_f1": None,
                "event_ids": extraction_ids[system.name],
            }
        )


def _rank(rows: list[dict[str, Any]]) -> None:
    for dataset in {r["dataset_sha256"] for r in rows}:
        group = [r for r in rows if r["dataset_sha256"] == dataset]
        for column, rank_column in (
            ("composite", "rank_composite"),
            ("seed_composite", "rank_seed_composite"),
            ("shingle_f1", "rank_shingle_f1"),
        ):
            for rank, row in enumerate(sorted(group, key=lambda r, c=column: -r[c]), start=1):
                row[rank_column] = rank


def _write_snapshot(target: Path, tables: dict[str, list[dict[str, Any]]]) -> Path:
    """Write the contract tables beside `target` and swap them in, as `warehouse.publish` does."""
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f".{target.name}.fixture-{os.getpid()}")
    scratch.unlink(missing_ok=True)
    try:
        with duckdb.connect(str(scratch)) as con:
            con.execute("create schema marts")
            for name, columns in DDL.items():
                con.execute(f"create table marts.{name} ({columns})")
                names = [c[0] for c in con.execute(f"describe marts.{name}").fetchall()]
                rows = tables.get(name, [])
                if rows:
                    placeholders = ", ".join("?" for _ in names)
                    con.executemany(
                        f"insert into marts.{name} values ({placeholders})",
                        [[row[n] for n in names] for row in rows],
                    )
            # What `publish_snapshot` adds beside the marts; the app treats it as optional.
            con.execute("create table main._publish (published_at varchar, metadata json)")
            con.execute(
                "insert into main._publish values (?, ?)",
                [
                    "2026-11-30T10:05:00+00:00",
                    json.dumps({"source": "tests/app/fixture_snapshot.py"}),
                ],
            )
        os.replace(scratch, target)
    finally:
        scratch.unlink(missing_ok=True)
    return target


def _target(path: str | Path) -> Path:
    target = Path(path)
    return target / "serve.duckdb" if target.is_dir() else target


def build_empty_snapshot(path: str | Path) -> Path:
    """A published snapshot whose marts exist but hold no rows (a fresh `bench publish`)."""
    return _write_snapshot(_target(path), {})


def build_fixture_snapshot(path: str | Path) -> FixtureSnapshot:
    """Publish the fixture marts to `path` (a serve.duckdb file, or a BENCH_HOME directory)."""
    target = _target(path)
    tables, facts = _rows()
    _write_snapshot(target, tables)

    run1, _run2 = facts["run_ids"]
    return FixtureSnapshot(
        serve_db=target,
        run_ids=facts["run_ids"],
        dataset_sha256={run.dataset.name: run.dataset.sha256 for run in RUNS},
        systems=[s.name for s in SYSTEMS],
        malicious={"run": run1, "system": "trafilatura", "item": "aeb-0004"},
        failed={
            "run": run1,
            "system": "readability-lxml",
            "item": "aeb-0003",
            "error_class": "lxml.etree.ParserError",
        },
        tables=tables,
    )


if __name__ == "__main__":  # handy for a manual look: python tests/app/fixture_snapshot.py DIR
    import sys

    snapshot = build_fixture_snapshot(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".bench"))
    print(snapshot.serve_db)
