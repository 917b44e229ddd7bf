"""The run kernel: spec -> remaining units -> writer/sink -> stages -> terminal events -> RunFinished.

Every family's run has the same skeleton, and it lives here once:

1. The run's lock is taken before anything is read: one process per run, from the first read
   of what is done to the last event. A second process on the same run waits for it
   (`BENCH_RUN_LOCK_WAIT_S`, 2 s by default), then either finds the run's work done or is
   refused with `RunLocked`, naming the holder; it never executes a unit the first one ran.
2. Under the lock, the family reads its state back from the log (`RunStages.load_state`: the
   log is the only resume state). Remaining work = the spec's units without their terminal
   events (`RunStages.remaining`). Nothing left and the log already says the run finished ->
   "already finished", and no segment is opened (not even an empty one).
3. `preflight` runs before anything is written (a missing library fails now).
4. The family's resources (HTTP pools, throttles) are entered for exactly the run's lifetime,
   then the log writer and the group-commit sink (`EventSink`).
5. The opening facts (run_started, registrations) are appended; the writer de-duplicates
   repeats by event id, so a resumed run re-states them for free.
6. Units run concurrently (bounded by `max_in_flight`, or by the family's own semaphores), each
   appending its events as soon as a stage ends; progress is reported per unit.
7. A crash or Ctrl-C cancels the other units but lets every event already handed to the sink
   reach the disk before the writer closes; the exception propagates.
8. If nothing stopped the run (an auth abort, a cost cap) the family's closing payload (its
   RunFinished, or None while units are incomplete) is appended. Then the lock is released.
   When the run is one of several shards (collectors/runs/shard.py), its run-level facts (start,
   judge regime, finish) are marked with the shard: each shard states them as its own events.

`RunContext.append` writes durably and only then folds each event into the family's state, so
the state never holds a fact the log does not.

Why the lock comes before the read: the writer takes the run's lock itself on its first append,
and refuses if the run grew since the writer opened; but a process that read the log, and
opened its writer only after another process had run and finished the whole run, saw nothing
grow and executed every unit again (1 of 13 concurrent same-spec `bench run` pairs, both
"completed 40": a double spend on a paid lane).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from collectors.http.event_sink import EventSink
from collectors.runs.shard import Shard
from warehouse.events import Envelope, Payload, Producer, RunFinished, ShardFact, make_event
from warehouse.log import EventLog

Unit = TypeVar("Unit")
ProgressCallback = Callable[[int, int], None]


class RunContext:
    """What a stage may do while the run is open: make events, append them, stop the run,
    charge spend against the cost cap."""

    def __init__(
        self, run_id: str, producer: Producer | None, *, cost_cap_usd: float | None = None
    ):
        self.run_id = run_id
        # None only until `load_state` reads it (a rejudge's comes from its run_started).
        self.producer = producer
        self._record: Callable[[dict[str, Any]], None] = lambda event: None
        self._sink: EventSink | None = None
        self.cost_cap_usd = cost_cap_usd
        self.spent_usd = 0.0
        self.stop_reason: str | None = None

    def event(self, payload: Payload) -> Envelope:
        assert self.producer is not None, "the producer is known once the state is loaded"
        return make_event(payload, run_id=self.run_id, producer=self.producer)

    async def append(self, *items: Payload | Envelope) -> list[Envelope]:
        """Durably write (group commit with concurrent units), in order, then fold into the
        family's state. Returns the envelopes written."""
        if not items:
            return []
        assert self._sink is not None, "append is only possible while the run is open"
        envelopes = [item if isinstance(item, Envelope) else self.event(item) for item in items]
        await asyncio.gather(*(self._sink.append(envelope) for envelope in envelopes))
        for envelope in envelopes:
            self._record(envelope.model_dump())
        return envelopes

    @property
    def stopped(self) -> bool:
        return self.stop_reason is not None

    def stop(self, reason: str) -> None:
        """No new stage starts; the run ends without RunFinished. The first reason wins."""
        if self.stop_reason is None:
            self.stop_reason = reason

    def charge(self, usd: float) -> None:
        """Count spend; reaching the cap stops the run (re-running resumes where it stopped)."""
        self.spent_usd += usd
        if self.cost_cap_usd is not None and self.spent_usd >= self.cost_cap_usd:
            self.stop(
                f"cost cap reached: ${self.spent_usd:.4f} spent of ${self.cost_cap_usd:.4f}; "
                "raise the cap and re-run the same command to resume"
            )


class RunStages(Generic[Unit]):
    """What a family supplies: `load_state`, `process`, `opening` and `closing`, and either the
    two attributes below or its own `remaining` / `record` / `is_finished`; the rest have
    defaults.

    - `state`: the family's state read back from the log; `state.record(event)` folds one
      appended event into it and `state.is_finished` says whether the log holds RunFinished.
    - `work`: the units with work left, computed from `state` by `load_state`."""

    state: Any
    work: list[Unit]
    # Set when the run is one shard of a run split across machines: the family plans only the
    # shard's items, and the kernel marks the shard's RunFinished with K and N.
    shard: Shard | None = None

    def load_state(self, log: EventLog) -> None:
        """Read the family's state back from the log and decide the work left. The kernel calls
        this holding the run's lock; reading the log anywhere else, earlier, is the race the
        lock exists to close (another process could run the units in between)."""
        raise NotImplementedError

    def remaining(self) -> Sequence[Unit]:
        """The units with work left, in the order they should start."""
        return self.work

    def is_finished(self) -> bool:
        """Called only when nothing remains: does the log already say this run finished?"""
        return self.state.is_finished

    def record(self, event: dict[str, Any]) -> None:
        """Fold one appended event (envelope dict) into the family's state."""
        self.state.record(event)

    def size(self, unit: Unit) -> int:
        """How much progress one unit is worth (e.g. the engines an item still needs)."""
        return 1

    def preflight(self, units: Sequence[Unit]) -> None:
        """Fail before anything is written (a missing library, a bad config)."""

    def resources(self) -> Iterable[AbstractAsyncContextManager[Any]]:
        """Async context managers that live exactly as long as the open run."""
        return ()

    def opening(self) -> list[Payload]:
        """run_started and registrations, appended before any unit runs."""
        return []

    async def process(self, unit: Unit, ctx: RunContext) -> None:
        raise NotImplementedError

    def closing(self, duration_s: float) -> RunFinished | None:
        """The run's RunFinished, or None when some unit still has work a re-run would do."""
        return None


@dataclass(frozen=True)
class KernelResult:
    already_finished: bool
    planned_work: int  # progress units with work left at the start of this invocation
    events_appended: int  # new lines written (a repeated fact is a no-op, not counted)
    duration_s: float
    stop_reason: str | None = None
    finished: bool = False  # this invocation appended RunFinished
    spent_usd: float = 0.0


def run_kernel(
    log: EventLog,
    ctx: RunContext,
    stages: RunStages[Any],
    *,
    max_in_flight: int | None = None,
    on_progress: ProgressCallback | None = None,
) -> KernelResult:
    """Run `stages` to the end (sync entry point). `max_in_flight=1` runs units one after the
    other in order; None leaves concurrency to the family's own semaphores."""
    return asyncio.run(
        run_kernel_async(log, ctx, stages, max_in_flight=max_in_flight, on_progress=on_progress)
    )


async def run_kernel_async(
    log: EventLog,
    ctx: RunContext,
    stages: RunStages[Any],
    *,
    max_in_flight: int | None = None,
    on_progress: ProgressCallback | None = None,
) -> KernelResult:
    clock = time.monotonic()

    def elapsed() -> float:
        return round(time.monotonic() - clock, 3)

    with log.run_lock(ctx.run_id):  # the writer's own take of it below shares this hold
        return await _run_locked(log, ctx, stages, max_in_flight, on_progress, elapsed)


async def _run_locked(
    log: EventLog,
    ctx: RunContext,
    stages: RunStages[Any],
    max_in_flight: int | None,
    on_progress: ProgressCallback | None,
    elapsed: Callable[[], float],
) -> KernelResult:
    """Steps 2-8 of the contract; the caller holds the run's lock."""
    stages.load_state(log)
    units = list(stages.remaining())
    if not units and stages.is_finished():
        return KernelResult(True, 0, 0, elapsed())
    stages.preflight(units)

    ctx._record = stages.record
    total, done = sum(stages.size(unit) for unit in units), 0

    def progressed(unit: Any) -> None:
        nonlocal done
        done += stages.size(unit)
        if on_progress:
            on_progress(done, total)

    if on_progress:
        on_progress(0, total)
    async with contextlib.AsyncExitStack() as stack:
        for resource in stages.resources():
            await stack.enter_async_context(resource)
        writer = stack.enter_context(log.writer())
        ctx._sink = EventSink(writer)
        finished = await _open_run_close(stages, units, ctx, max_in_flight, progressed, elapsed)
        appended = writer.appended
    return KernelResult(
        already_finished=False,
        planned_work=total,
        events_appended=appended,
        duration_s=elapsed(),
        stop_reason=ctx.stop_reason,
        finished=finished,
        spent_usd=ctx.spent_usd,
    )


async def _open_run_close(
    stages: RunStages[Any],
    units: list[Any],
    ctx: RunContext,
    max_in_flight: int | None,
    progressed: Callable[[Any], None],
    elapsed: Callable[[], float],
) -> bool:
    """Opening facts, every unit, then RunFinished unless stopped; True when it finished."""
    assert ctx._sink is not None
    try:
        await ctx.append(*(_marked(fact, stages.shard) for fact in stages.opening()))
        if max_in_flight == 1:
            for unit in units:
                if ctx.stopped:
                    break
                await stages.process(unit, ctx)
                progressed(unit)
        else:
            await _run_concurrently(stages, units, ctx, max_in_flight, progressed)
    except BaseException:
        # Crash or Ctrl-C: whatever was handed to the sink still reaches the disk before
        # the writer closes (the caller's exit stack), then the exception propagates.
        await ctx._sink.drain()
        raise
    await ctx._sink.drain()
    if ctx.stopped:
        return False
    closing = stages.closing(elapsed())
    if closing is None:
        return False
    await ctx.append(_marked(closing, stages.shard))
    return True


def _marked(fact: Payload, shard: Shard | None) -> Payload:
    """A run-level fact (start, judge regime, finish) as one shard of a split run states it: with
    its K and N, so each shard's statement is an event of its own (warehouse/events.ShardFact)."""
    if shard is None or not isinstance(fact, ShardFact):
        return fact
    return fact.model_copy(update={"shard": shard.index, "shards": shard.count})


async def _run_concurrently(
    stages: RunStages[Any],
    units: list[Any],
    ctx: RunContext,
    max_in_flight: int | None,
    progressed: Callable[[Any], None],
) -> None:
    slots = asyncio.Semaphore(max_in_flight) if max_in_flight else None

    async def one(unit: Any) -> None:
        async with slots if slots is not None else contextlib.nullcontext():
            if not ctx.stopped:
                await stages.process(unit, ctx)
        progressed(unit)

    tasks = [asyncio.create_task(one(unit)) for unit in units]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def fold_log(log: EventLog, run_id: str, record: Callable[[dict[str, Any]], None]) -> None:
    """Feed every event of `run_id` in the log, in log order, to `record` (how each family's
    state is read back: the same fold the kernel applies to each event it appends)."""
    for _raw, event in log.read():
        if event["run_id"] == run_id:
            record(event)
