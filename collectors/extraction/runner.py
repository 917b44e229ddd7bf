"""Run local extraction engines over a corpus: plan -> remaining work -> events.

A run is a frozen spec (dataset sha256, selected item ids, engines with versions and
settings, render path, anchor rule); its id is derived from the spec's sha256, so the same
command always names the same run. Remaining work = spec units without a terminal event in
the log. One item's events (item_registered + one terminal event per engine) go to the log
in one append, so an interrupt loses at most the item in flight. The run skeleton (resume,
writer, cancellation, RunFinished) is the shared kernel, `collectors.runs.kernel`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from collectors.extraction.anchors import ANCHOR_RULE_VERSION
from collectors.extraction.corpus import Corpus, CorpusError, CorpusItem, PageInput
from collectors.extraction.engines import Engine, get_engine
from collectors.extraction.run_state import RunState, item_registered, read_run_state
from collectors.runs.kernel import ProgressCallback, RunContext, RunStages, run_kernel
from collectors.runs.messages import truncate_message
from collectors.runs.shard import Shard, sharded
from collectors.runs.summary import RunSummary
from warehouse.canonical import canonical_sha256
from warehouse.events import (
    ExtractionCompleted,
    ExtractionFailed,
    Payload,
    RunFinished,
    RunStarted,
    SystemRef,
)
from warehouse.ids import run_id_for
from warehouse.log import EventLog
from warehouse.provenance import producer_for

__all__ = ["ExtractionPlan", "ProgressCallback", "plan_extraction", "run_extraction"]

RENDER_PATH = "raw_html"  # engines get the stored HTML as is; nothing is fetched or rendered


@dataclass(frozen=True)
class ExtractionPlan:
    corpus: Corpus
    items: tuple[CorpusItem, ...]
    engines: tuple[Engine, ...]
    systems: tuple[SystemRef, ...]
    spec: dict[str, Any]
    spec_sha256: str
    run_id: str
    shard: Shard | None = None  # one slice of the run (collectors/runs/shard.py)

    @property
    def units(self) -> list[tuple[str, str]]:
        return [(item.item_id, engine.name) for item in self.items for engine in self.engines]

    def for_shard(self, shard: Shard | None) -> ExtractionPlan:
        return sharded(self, shard, "items", key=lambda item: item.item_id)


def plan_extraction(
    corpus: Corpus, engine_names: Iterable[str], limit: int | None = None
) -> ExtractionPlan:
    names = sorted(set(engine_names))  # order must not change the run id
    if not names:
        raise ValueError("no extraction engines selected")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive number of items, got {limit}")
    engines = tuple(get_engine(name) for name in names)
    systems = tuple(engine.system_ref() for engine in engines)
    items = corpus.items[:limit] if limit is not None else corpus.items
    spec = {
        "benchmark": "extraction",
        "source": "engine",
        "dataset_sha256": corpus.dataset.sha256,
        "item_ids": [item.item_id for item in items],
        "systems": [system.model_dump(mode="json") for system in systems],
        "render_path": RENDER_PATH,
        "anchor_rule_version": ANCHOR_RULE_VERSION,
    }
    spec_sha256 = canonical_sha256(spec)
    return ExtractionPlan(
        corpus=corpus,
        items=items,
        engines=engines,
        systems=systems,
        spec=spec,
        spec_sha256=spec_sha256,
        run_id=run_id_for(spec_sha256),
    )


def _extract_once(
    engine: Engine, system: SystemRef, item: CorpusItem, page: PageInput, attempt: int
) -> tuple[Payload, bool]:
    """One terminal payload for (item, engine) and whether it failed. Never raises on an
    engine error: that is the fact to record. KeyboardInterrupt & co. still propagate."""
    started = time.perf_counter_ns()
    try:
        text = engine.extract(page.html, item.url)
    except Exception as exc:
        latency_ms = (time.perf_counter_ns() - started) / 1e6
        return ExtractionFailed(
            item_id=item.item_id,
            system=system.name,
            system_version=system.version,
            settings=system.settings,
            attempt=attempt,
            error_class=type(exc).__name__,
            error_message=truncate_message(str(exc) or repr(exc)),
            latency_ms=latency_ms,
        ), True
    latency_ms = (time.perf_counter_ns() - started) / 1e6
    return ExtractionCompleted(
        item_id=item.item_id,
        system=system.name,
        system_version=system.version,
        settings=system.settings,
        attempt=attempt,
        source="engine",
        render_path=RENDER_PATH,
        input_sha256=page.sha256,
        output_text=text,
        output_bytes=len(text.encode("utf-8")) if text is not None else 0,
        latency_ms=latency_ms,
    ), False


def _read_verified(item: CorpusItem) -> PageInput:
    page = item.read_html()
    if page.sha256 != item.html_sha256:
        raise CorpusError(
            f"{item.html_path}: changed since the corpus was loaded "
            f"(sha256 {page.sha256}, was {item.html_sha256})"
        )
    return page


@dataclass(frozen=True)
class _ItemWork:
    item: CorpusItem
    units: tuple[tuple[Engine, SystemRef, int], ...]  # (engine, system, attempt) still to do


class _ExtractionStages(RunStages[_ItemWork]):
    """One kernel unit per item: its remaining engines run in one append, so an interrupt
    loses at most the item in flight."""

    def __init__(self, plan: ExtractionPlan, retry_failed: bool, argv):
        self.plan, self.retry_failed, self.argv = plan, retry_failed, list(argv)
        self.shard = plan.shard
        self.work: list[_ItemWork] = []
        self.skipped = self.completed = self.failed = 0

    def load_state(self, log: EventLog) -> None:
        plan, retry_failed = self.plan, self.retry_failed
        self.state: RunState = read_run_state(log, plan.run_id)
        state = self.state
        for item in plan.items:
            units = []
            for engine, system in zip(plan.engines, plan.systems, strict=True):
                previous = state.latest.get((item.item_id, engine.name))
                if previous is None:
                    units.append((engine, system, 1))
                elif previous.failed and retry_failed:
                    units.append((engine, system, previous.attempt + 1))
                else:
                    self.skipped += 1
            if units:
                self.work.append(_ItemWork(item, tuple(units)))

    def size(self, unit: _ItemWork) -> int:
        return len(unit.units)

    def preflight(self, units: Sequence[_ItemWork]) -> None:
        # A missing library fails now, before anything is written.
        for engine in {engine for work in units for engine, _, _ in work.units}:
            engine.load()

    def opening(self) -> list[Payload]:
        plan = self.plan
        return [
            RunStarted(
                benchmark="extraction",
                source="engine",
                spec=plan.spec,
                spec_sha256=plan.spec_sha256,
                dataset=plan.corpus.dataset,
                systems=list(plan.systems),
                argv=self.argv,
            )
        ]

    async def process(self, unit: _ItemWork, ctx: RunContext) -> None:
        item = unit.item
        page = _read_verified(item)
        payloads: list[Payload] = [item_registered(item, self.plan.corpus.dataset.sha256)]
        for engine, system, attempt in unit.units:
            payload, is_failure = _extract_once(engine, system, item, page, attempt)
            payloads.append(payload)
            self.failed += is_failure
            self.completed += not is_failure
        await ctx.append(*payloads)

    def closing(self, duration_s: float) -> RunFinished:
        completed, failed = self.state.counts(self.plan.units)
        return RunFinished(
            terminal_events=self.state.terminal_events,
            completed=completed,
            failed=failed,
            duration_s=duration_s,
        )


def run_extraction(
    log: EventLog,
    corpus: Corpus,
    engine_names: Iterable[str],
    *,
    limit: int | None = None,
    retry_failed: bool = False,
    argv: Sequence[str] = (),
    on_progress: ProgressCallback | None = None,
    shard: Shard | None = None,
) -> RunSummary:
    plan = plan_extraction(corpus, engine_names, limit).for_shard(shard)
    stages = _ExtractionStages(plan, retry_failed, argv)
    ctx = RunContext(plan.run_id, producer_for(plan.spec))
    result = run_kernel(log, ctx, stages, max_in_flight=1, on_progress=on_progress)
    summary = RunSummary(
        run_id=plan.run_id,
        spec_sha256=plan.spec_sha256,
        planned=len(plan.units),
        skipped_existing=stages.skipped,
        completed=stages.completed,
        failed=stages.failed,
    )
    summary.absorb(result)
    return summary
