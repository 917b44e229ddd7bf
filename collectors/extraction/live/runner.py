"""The live-URL extraction run (methodology §4.1), on the shared run kernel.

A run is a frozen spec: the URL file's sha256, the selected item ids, the engines with their
versions and settings (vendor prices with their snapshot date, the fetcher's limits), and the
default render path. Its id derives from the spec, so the same command resumes.

Per URL (one kernel unit), for every engine still without a terminal event:
- local engines: one `page_fetched` (the local fetcher; redirects followed and recorded) feeds
  every local engine; the fetch and the local engines' terminal events go in one append;
- vendor engines, concurrently: the raw `provider_call_completed | provider_call_failed`
  (stage "extract") and the terminal event go in one append, raw first.
The terminal event of (URL, engine) is `live_extraction_recorded`, outcome extracted | failed;
a kill -9 loses at most appends in flight, and a re-run does exactly what has no terminal event.
A vendor refusing the key (401/402/403) aborts that engine (its raw call is logged, nothing
terminal) and the run ends unfinished; fix the key and re-run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from collectors.extraction.engines import Engine
from collectors.extraction.live.corpus import LiveUrl, Render, UrlCorpus
from collectors.extraction.live.engines import (
    VendorClient,
    VendorEngine,
    local_system_ref,
    split_engines,
)
from collectors.extraction.live.fetcher import FetchSettings, fetch_page, new_fetch_client
from collectors.http import LaneAborted
from collectors.runs.kernel import ProgressCallback, RunContext, RunStages, fold_log, run_kernel
from collectors.runs.messages import truncate_message
from collectors.runs.shard import Shard, sharded
from collectors.runs.summary import RunSummary
from warehouse.canonical import canonical_sha256
from warehouse.events import (
    LiveExtractionRecorded,
    LiveUrlRegistered,
    PageFetched,
    Payload,
    RunFinished,
    RunStarted,
    SystemRef,
)
from warehouse.ids import run_id_for
from warehouse.log import EventLog
from warehouse.provenance import producer_for

BENCHMARK = "live_extraction"
TERMINAL = "live_extraction_recorded"
DEFAULT_URL_CONCURRENCY = 4


@dataclass(frozen=True)
class LivePlan:
    corpus: UrlCorpus
    items: tuple[LiveUrl, ...]
    local: tuple[Engine, ...]
    vendors: tuple[VendorEngine, ...]
    systems: tuple[SystemRef, ...]
    render: Render
    fetch: FetchSettings
    spec: dict[str, Any]
    spec_sha256: str
    run_id: str
    shard: Shard | None = None  # one slice of the run (collectors/runs/shard.py)

    def for_shard(self, shard: Shard | None) -> LivePlan:
        return sharded(self, shard, "items", key=lambda item: item.item_id)

    @property
    def engine_names(self) -> list[str]:
        return [system.name for system in self.systems]

    @property
    def units(self) -> list[tuple[str, str]]:
        return [(item.item_id, name) for item in self.items for name in self.engine_names]

    def render_for(self, item: LiveUrl) -> Render:
        return item.render or self.render

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "spec_sha256": self.spec_sha256,
            "benchmark": BENCHMARK,
            "dataset": self.corpus.dataset.model_dump(mode="json"),
            "urls": len(self.items),
            "engines": [system.model_dump(mode="json") for system in self.systems],
            "render": self.render,
            "units": len(self.units),
            "requests_to_vendors": len(self.items) * len(self.vendors),
            "verticals": sorted({item.vertical for item in self.items}),
        }


def plan_live_extraction(
    corpus: UrlCorpus,
    engine_names: Iterable[str],
    *,
    render: Render = "auto",
    limit: int | None = None,
    fetch: FetchSettings | None = None,
) -> LivePlan:
    names = sorted(set(engine_names))  # order must not change the run id
    if not names:
        raise ValueError("no extraction engines selected")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive number of URLs, got {limit}")
    local, vendors = split_engines(names)
    fetch = fetch or FetchSettings()
    systems = tuple(
        sorted(
            [local_system_ref(engine, fetch.as_dict()) for engine in local]
            + [engine.system_ref() for engine in vendors],
            key=lambda system: system.name,
        )
    )
    items = corpus.items[:limit] if limit is not None else corpus.items
    spec = {
        "benchmark": BENCHMARK,
        "dataset_sha256": corpus.dataset.sha256,
        "item_ids": [item.item_id for item in items],
        "systems": [system.model_dump(mode="json") for system in systems],
        "render": render,
    }
    spec_sha256 = canonical_sha256(spec)
    return LivePlan(
        corpus=corpus,
        items=tuple(items),
        local=tuple(local),
        vendors=tuple(vendors),
        systems=systems,
        render=render,
        fetch=fetch,
        spec=spec,
        spec_sha256=spec_sha256,
        run_id=run_id_for(spec_sha256),
    )


@dataclass
class LiveRunState:
    """What the log holds for one live run: terminal (item, engine) pairs and registrations."""

    terminal: dict[tuple[str, str], str] = field(default_factory=dict)  # -> outcome
    registered: set[str] = field(default_factory=set)
    finished_at_counts: set[int] = field(default_factory=set)

    def record(self, event: dict[str, Any]) -> None:
        kind, payload = event["event_type"], event["payload"]
        if kind == TERMINAL:
            self.terminal[(payload["item_id"], payload["system"])] = payload["outcome"]
        elif kind == "live_url_registered":
            self.registered.add(payload["item_id"])
        elif kind == "run_finished":
            self.finished_at_counts.add(payload["terminal_events"])


@dataclass(frozen=True)
class _UrlWork:
    item: LiveUrl
    local: tuple[tuple[Engine, SystemRef], ...]
    vendors: tuple[tuple[VendorEngine, SystemRef], ...]


class _LiveStages(RunStages[_UrlWork]):
    def __init__(self, plan: LivePlan, vendors: VendorClient, argv: Sequence[str]):
        self.plan, self.vendor_client, self.argv = plan, vendors, list(argv)
        self.shard = plan.shard
        self.aborted: dict[str, str] = {}
        self.extracted = self.failed = self.skipped = 0
        self.work: list[_UrlWork] = []

    def load_state(self, log: EventLog) -> None:
        plan = self.plan
        self.state = state = read_live_state(log, plan.run_id)
        refs = {system.name: system for system in plan.systems}
        for item in plan.items:
            local = tuple(
                (e, refs[e.name])
                for e in plan.local
                if (item.item_id, e.name) not in state.terminal
            )
            vendors_due = tuple(
                (e, refs[e.name])
                for e in plan.vendors
                if (item.item_id, e.name) not in state.terminal
            )
            self.skipped += len(plan.engine_names) - len(local) - len(vendors_due)
            if local or vendors_due:
                self.work.append(_UrlWork(item, local, vendors_due))

    # -- the kernel's questions --

    def is_finished(self) -> bool:
        return len(self.state.terminal) in self.state.finished_at_counts

    def size(self, unit: _UrlWork) -> int:
        return len(unit.local) + len(unit.vendors)

    def preflight(self, units: Sequence[_UrlWork]) -> None:
        for engine in {engine for unit in units for engine, _ in unit.local}:
            engine.load()  # a missing library fails now, before anything is written
        if any(unit.vendors for unit in units):
            self.vendor_client.check_keys()

    def resources(self):
        return [self.vendor_client] if self.plan.vendors else []

    def opening(self) -> list[Payload]:
        plan = self.plan
        return [
            RunStarted(
                benchmark=BENCHMARK,
                source="engine",
                spec=plan.spec,
                spec_sha256=plan.spec_sha256,
                dataset=plan.corpus.dataset,
                systems=list(plan.systems),
                argv=self.argv,
            )
        ]

    def closing(self, duration_s: float) -> RunFinished | None:
        if self.aborted or any(unit not in self.state.terminal for unit in self.plan.units):
            return None
        failed = sum(1 for unit in self.plan.units if self.state.terminal[unit] == "failed")
        return RunFinished(
            terminal_events=len(self.state.terminal),
            completed=len(self.plan.units) - failed,
            failed=failed,
            duration_s=duration_s,
        )

    # -- one URL --

    async def process(self, unit: _UrlWork, ctx: RunContext) -> None:
        item = unit.item
        first: list[Payload] = []
        if item.item_id not in self.state.registered:
            first.append(
                LiveUrlRegistered(
                    item_id=item.item_id,
                    dataset_sha256=self.plan.corpus.dataset.sha256,
                    position=item.position,
                    url=item.url,
                    vertical=item.vertical,
                    render_requested=self.plan.render_for(item),
                )
            )
        jobs = [self.vendor(item, engine, ref, ctx) for engine, ref in unit.vendors]
        if unit.local:
            jobs.append(self.local(item, unit.local, ctx, first))
        elif first:
            await ctx.append(*first)
        await asyncio.gather(*jobs)

    async def local(
        self,
        item: LiveUrl,
        engines: Sequence[tuple[Engine, SystemRef]],
        ctx: RunContext,
        first: list[Payload],
    ) -> None:
        render = self.plan.render_for(item)
        async with new_fetch_client(self.plan.fetch) as client:
            fetched = await fetch_page(
                client,
                item.url,
                item_id=item.item_id,
                attempt=1,
                render_requested=render,
                settings=self.plan.fetch,
            )
        fetch_event = ctx.event(fetched)
        terminals = []
        for engine, ref in engines:
            terminals.append(
                await asyncio.to_thread(
                    self._extract_local, item, engine, ref, fetched, fetch_event.event_id
                )
            )
        await ctx.append(*first, fetch_event, *terminals)
        for terminal in terminals:
            self._count(terminal)

    def _extract_local(
        self,
        item: LiveUrl,
        engine: Engine,
        ref: SystemRef,
        fetched: PageFetched,
        fetch_event_id: str,
    ) -> LiveExtractionRecorded:
        common = {
            **_unit_fields(item, ref),
            "target_status_code": fetched.status_code,
            "final_url": fetched.final_url,
            "redirect_chain": fetched.redirect_chain,
            "render_requested": fetched.render_requested,
            "render_used": fetched.render_used,
            "requests_sent": 1,
            "source_event_ids": [fetch_event_id],
        }
        if fetched.body is None:
            return LiveExtractionRecorded(
                **common,
                outcome="failed",
                latency_ms=fetched.elapsed_ms,
                error_class=fetched.error_class or "no_body",
                error_message=fetched.error_message,
            )
        started = time.perf_counter()
        try:
            text = engine.extract(fetched.body, fetched.final_url)
        except Exception as exc:  # an engine error is the fact to record
            return LiveExtractionRecorded(
                **common,
                outcome="failed",
                latency_ms=fetched.elapsed_ms + (time.perf_counter() - started) * 1000,
                error_class=type(exc).__name__,
                error_message=truncate_message(str(exc) or repr(exc)),
            )
        return LiveExtractionRecorded(
            **common,
            outcome="extracted",
            output_text=text,
            output_bytes=len(text.encode("utf-8")) if text else 0,
            latency_ms=fetched.elapsed_ms + (time.perf_counter() - started) * 1000,
        )

    async def vendor(
        self, item: LiveUrl, engine: VendorEngine, ref: SystemRef, ctx: RunContext
    ) -> None:
        if engine.name in self.aborted or ctx.stopped:
            return
        render = self.plan.render_for(item)
        try:
            result = await self.vendor_client.extract(
                engine.name, item.url, render, item_id=item.item_id, attempt=1
            )
        except LaneAborted as abort:  # the refused call is evidence; the unit stays pending
            await ctx.append(abort.payload)
            self.aborted.setdefault(engine.name, f"{engine.name}: {abort}")
            return
        outcome, read = result.outcome, result.value
        raw = ctx.event(outcome.payload)
        timings = result.timings
        common = {
            **_unit_fields(item, ref),
            "render_requested": render,
            "latency_ms": timings.round_trip_ms
            if timings.round_trip_ms is not None
            else timings.whole_call_ms,
            "requests_sent": max(
                1, outcome.payload.http_attempts
            ),  # failed requests assumed billed
            "source_event_ids": [raw.event_id],
        }
        if read is None:
            terminal = LiveExtractionRecorded(
                **common,
                outcome="failed",
                error_class=outcome.payload.error_class,
                error_message=truncate_message(outcome.payload.error_message),
            )
        else:
            failed = read.text is None and read.error_class is not None
            terminal = LiveExtractionRecorded(
                **common,
                outcome="failed" if failed else "extracted",
                output_text=read.text,
                output_bytes=len(read.text.encode("utf-8")) if read.text else 0,
                target_status_code=read.target_status_code,
                final_url=read.final_url,
                redirect_chain=read.redirect_chain,
                render_used=read.render_used,
                error_class=read.error_class,
                error_message=truncate_message(read.error_message) if read.error_message else None,
            )
        await ctx.append(raw, terminal)
        self._count(terminal)
        if engine.price_usd_per_1k:
            ctx.charge(engine.price_usd_per_1k / 1000 * terminal.requests_sent)

    def _count(self, terminal: LiveExtractionRecorded) -> None:
        if terminal.outcome == "failed":
            self.failed += 1
        else:
            self.extracted += 1


def _unit_fields(item: LiveUrl, ref: SystemRef) -> dict[str, Any]:
    """What identifies one (URL, engine) terminal event (one attempt: failures are facts)."""
    return {
        "item_id": item.item_id,
        "url": item.url,
        "system": ref.name,
        "system_version": ref.version,
        "settings": ref.settings,
        "attempt": 1,
    }


def read_live_state(log: EventLog, run_id: str) -> LiveRunState:
    state = LiveRunState()
    fold_log(log, run_id, state.record)
    return state


def run_live_extraction(
    log: EventLog,
    plan: LivePlan,
    *,
    base_urls: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    url_concurrency: int = DEFAULT_URL_CONCURRENCY,
    cost_cap_usd: float | None = None,
    argv: Sequence[str] = (),
    on_progress: ProgressCallback | None = None,
) -> RunSummary:
    vendors = VendorClient(plan.vendors, base_urls=base_urls, environ=environ)
    stages = _LiveStages(plan, vendors, argv)
    ctx = RunContext(plan.run_id, producer_for(plan.spec), cost_cap_usd=cost_cap_usd)
    result = run_kernel(
        log, ctx, stages, max_in_flight=max(1, url_concurrency), on_progress=on_progress
    )
    summary = RunSummary(
        run_id=plan.run_id,
        spec_sha256=plan.spec_sha256,
        planned=len(plan.units),
        skipped_existing=stages.skipped,
        completed=stages.extracted,
        failed=stages.failed,
        aborted_lanes=dict(stages.aborted),
        systems_word="engine",
    )
    summary.absorb(result)
    return summary
