"""Rubric-judged research runs: plan -> resumable staged work -> events (methodology §1.2-§1.4).

A run is a frozen spec: the task file's sha256, the selected upstream item ids, the research
lanes with their settings and the report instruction (prompt id + sha256). The run id is
derived from it, so the same command names the same run and re-running it resumes. What is done
*to* the stored outputs is not part of the run's identity: a judge regime (judge id + the
bibliography normaliser version of the text it judges) is a stage on a run, so judging again
with another model or over re-normalised text (`rejudge`, or the same `bench run` with another
`--judge`) reuses every stored report and calls no research system.

Per (task, lane) the stages run in order, each appended (fsync'd) as soon as it ends:
research (vendor HTTP exchanges, then research_completed | research_failed) ->
report_normalized (pure; no call) -> one judge_verdict per criterion × sample. Resume, per
stage: a lane whose latest attempt failed gets one new attempt per invocation (up to
`max_research_attempts` failures); an attempt cut off by a crash or an abort is abandoned (its
logged exchanges stay) and the next number is used; a missing normalised report is rebuilt from the stored output; a
missing verdict is judged, and a sample whose latest verdict is a failed call is judged again
as the next `judge_attempt`. Unparsed verdicts are final (they already took the least
favourable verdict and are flagged); dbt scores only the latest judge attempt.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from collectors.draco.dataset import task_payloads
from collectors.draco.judge import judge_regime_payload
from collectors.draco.model import Criterion, Judge, JudgeSample, ResearchLane, RubricTask
from collectors.draco.run_state import DracoRunState, read_draco_run_state
from collectors.draco.systems import VENDOR_KEY_ENVS
from collectors.http import LaneAborted
from collectors.http.redaction import Redactor
from collectors.llm.base import LlmCallError, LlmConfigError
from collectors.runs.kernel import ProgressCallback, RunContext, RunStages, run_kernel
from collectors.runs.shard import Shard, sharded
from collectors.runs.summary import RunSummary
from warehouse.canonical import canonical_sha256
from warehouse.events import (
    DatasetRef,
    JudgeVerdict,
    Payload,
    ReportCitation,
    ReportNormalized,
    ResearchCompleted,
    ResearchFailed,
    RunFinished,
    RunStarted,
)
from warehouse.ids import run_id_for
from warehouse.log import EventLog
from warehouse.provenance import producer_for

DEFAULT_JUDGE_CONCURRENCY = 4
# Every key this process may hold: an error message echoing one is scrubbed before it is stored.
KEY_ENVS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_COMPATIBLE_API_KEY")
DEFAULT_MAX_RESEARCH_ATTEMPTS = 3
Benchmark = Literal["draco", "rubric"]


class DracoRunError(ValueError):
    """The run cannot start as asked (no lanes, duplicate lanes, unknown items)."""


class DracoRunAborted(RuntimeError):
    """The judge refused the key (401/402/403): nothing more can be judged."""


class Instruction(Protocol):
    """The report-shaped instruction every system gets (a versioned prompt file)."""

    prompt_id: str
    sha256: str

    def render(self, **values: str) -> str: ...


class Normalizer(Protocol):
    """(lane, item_id, attempt, source_event_id, raw_output, citations) -> the normalised
    report, tagged with `version` (`collectors.draco.normalize.NORMALIZER` is the one in use)."""

    version: str

    def __call__(
        self,
        lane: str,
        item_id: str,
        attempt: int,
        source_event_id: str,
        raw_output: str,
        citations: Sequence[ReportCitation],
    ) -> ReportNormalized: ...


@dataclass(frozen=True)
class DracoRunPlan:
    benchmark: Benchmark
    dataset: DatasetRef
    tasks: tuple[RubricTask, ...]
    lanes: tuple[ResearchLane, ...]
    instruction: Instruction
    spec: dict[str, Any]
    spec_sha256: str
    run_id: str
    shard: Shard | None = None  # one slice of the run (collectors/runs/shard.py)

    @property
    def units(self) -> list[tuple[str, str]]:
        return [(task.item_id, lane.lane) for task in self.tasks for lane in self.lanes]

    def for_shard(self, shard: Shard | None) -> DracoRunPlan:
        return sharded(self, shard, "tasks", key=lambda task: task.item_id)


def plan_draco_run(
    *,
    benchmark: Benchmark,
    dataset: DatasetRef,
    tasks: Sequence[RubricTask],
    lanes: Sequence[ResearchLane],
    instruction: Instruction,
) -> DracoRunPlan:
    if not lanes:
        raise DracoRunError("no research systems selected")
    if not tasks:
        raise DracoRunError("no tasks selected")
    names = [lane.lane for lane in lanes]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise DracoRunError(f"system(s) given twice: {', '.join(twice)}")
    ordered = tuple(sorted(lanes, key=lambda lane: lane.lane))  # order must not change the id
    spec = {
        "benchmark": benchmark,
        "dataset_sha256": dataset.sha256,
        "dataset_name": dataset.name,
        "item_ids": [task.item_id for task in tasks],
        "systems": [lane.system_ref().model_dump(mode="json") for lane in ordered],
        "instruction": {"prompt_id": instruction.prompt_id, "sha256": instruction.sha256},
    }
    spec_sha256 = canonical_sha256(spec)
    return DracoRunPlan(
        benchmark=benchmark,
        dataset=dataset,
        tasks=tuple(tasks),
        lanes=ordered,
        instruction=instruction,
        spec=spec,
        spec_sha256=spec_sha256,
        run_id=run_id_for(spec_sha256),
    )


@dataclass(kw_only=True)
class DracoRunSummary(RunSummary):
    judge_id: str
    researched: int = 0  # research attempts completed by this invocation
    research_failed: int = 0
    normalized: int = 0
    verdicts: int = 0  # verdict samples appended by this invocation
    flagged: int = 0  # ... of which unparsed or failed (least favourable verdict)
    pending: int = 0  # units left with work a re-run would do (failed attempts, failed samples)
    systems_word: str = field(default="system", repr=False)

    def incomplete(self) -> str | None:
        if not self.pending:
            return None
        return (
            f"{self.pending} unit(s) have failed research or judge samples; "
            "re-run the same command to retry them"
        )

    def has_failures(self) -> bool:
        return self.research_failed > 0

    def failures(self) -> str:
        return f"{self.research_failed} failed research attempt(s)"


class DracoPreflightFailed(RuntimeError):
    """A research system refused its key or could not be reached: nothing was run."""


def preflight_lanes(lanes: Sequence[ResearchLane]) -> list[tuple[str, str, str]]:
    """(lane, status, detail) for every lane, one cheap call each and no research started;
    raises DracoPreflightFailed (after checking every lane) when any is refused or unreachable."""

    async def check_all() -> list[tuple[str, str, str]]:
        results = []
        for lane in lanes:
            async with lane:
                status, detail = await lane.preflight()
            results.append((lane.lane, status, detail))
        return results

    results = asyncio.run(check_all())
    bad = [
        f"{lane}: {status} ({detail})"
        for lane, status, detail in results
        if status not in ("ok", "skipped")
    ]
    if bad:
        raise DracoPreflightFailed("preflight: " + "; ".join(bad) + "; nothing was run")
    return results


def regime_id(judge: Judge, normalizer_version: str) -> str:
    """The judge regime a run's verdicts are filed under: the judge's own id (model, provider,
    prompt, samples, sampling) plus the normaliser version of the text it judged."""
    return f"{judge.judge_id}|norm={normalizer_version}"


def run_draco(
    log: EventLog,
    plan: DracoRunPlan,
    judge: Judge,
    normalizer: Normalizer,
    *,
    max_research_attempts: int = DEFAULT_MAX_RESEARCH_ATTEMPTS,
    judge_concurrency: int = DEFAULT_JUDGE_CONCURRENCY,
    lane_concurrency: int = 4,
    argv: Sequence[str] = (),
    on_progress: ProgressCallback | None = None,
) -> DracoRunSummary:
    stages = _DracoStages(
        plan.run_id,
        judge,
        normalizer,
        plan=plan,
        max_research_attempts=max_research_attempts,
        judge_concurrency=judge_concurrency,
        lane_concurrency=lane_concurrency,
        argv=argv,
    )
    return stages.execute(log, on_progress)


def rejudge(
    log: EventLog,
    run_id: str,
    judge: Judge,
    normalizer: Normalizer,
    *,
    judge_concurrency: int = DEFAULT_JUDGE_CONCURRENCY,
    argv: Sequence[str] = (),
    on_progress: ProgressCallback | None = None,
) -> DracoRunSummary:
    """Judge a run's stored reports again with another judge regime; no system is called.

    Reports not yet normalised with `normalizer.version` are normalised from the stored raw
    output first (pure; no call)."""
    stages = _DracoStages(
        run_id, judge, normalizer, plan=None, judge_concurrency=judge_concurrency, argv=argv
    )
    return stages.execute(log, on_progress)


class _DracoStages(RunStages[tuple[str, str]]):
    """Research -> normalise -> judge per (task, lane); the kernel owns the run around them."""

    def __init__(
        self,
        run_id: str,
        judge: Judge,
        normalizer: Normalizer,
        *,
        plan: DracoRunPlan | None,
        max_research_attempts: int = DEFAULT_MAX_RESEARCH_ATTEMPTS,
        judge_concurrency: int = DEFAULT_JUDGE_CONCURRENCY,
        lane_concurrency: int = 4,
        argv: Sequence[str] = (),
    ):
        self.run_id = run_id
        self.judge = judge
        self.normalizer = normalizer
        self.normalizer_version = normalizer.version
        # The regime: the judge's own id (model, provider, prompt, samples, sampling) plus the
        # version of the text it judges, so judging a re-normalised report is a new regime
        # instead of a collision with the verdicts on the old text.
        self.regime_id = regime_id(judge, normalizer.version)
        self.plan = plan
        self.shard = plan.shard if plan else None
        self.max_research_attempts = max(1, max_research_attempts)
        self.judge_concurrency = max(1, judge_concurrency)
        self.lane_concurrency = max(1, lane_concurrency)
        self.argv = list(argv)
        self.lanes = {lane.lane: lane for lane in plan.lanes} if plan else {}
        self.tasks = {task.item_id: task for task in plan.tasks} if plan else {}
        # A rejudge learns its producer, lanes and items from the run's own events, read
        # under the run's lock (`load_state`).
        self.lane_names = [lane.lane for lane in plan.lanes] if plan else []
        self.item_ids = [task.item_id for task in plan.tasks] if plan else []
        self.summary = DracoRunSummary(
            run_id=run_id, judge_id=self.regime_id, planned=0, skipped_existing=0
        )
        self.ctx = RunContext(run_id, producer_for(plan.spec) if plan else None)
        self.judge_slots = asyncio.Semaphore(self.judge_concurrency)
        self.lane_slots = {
            lane: asyncio.Semaphore(self.lane_concurrency) for lane in self.lane_names
        }
        self.redactor = Redactor(os.environ.get(name, "") for name in KEY_ENVS + VENDOR_KEY_ENVS)

    # -- events --

    async def append(self, payload: Payload) -> str:
        """Durably write one event (group commit with concurrent units); returns its id."""
        (envelope,) = await self.ctx.append(payload)
        return envelope.event_id

    # -- what is left --

    def task(self, item_id: str) -> RubricTask:
        return self.tasks.get(item_id) or self.state.rubric_task(item_id)

    def research_attempt_due(self, item_id: str, lane: str) -> int | None:
        """The attempt number to run now, or None when research is settled for this unit."""
        if self.plan is None:
            return None  # rejudging never calls a system
        unit = self.state.unit(item_id, lane)
        if unit.scored_attempt is not None:
            return None
        if unit.failed_attempts >= self.max_research_attempts:
            return None
        # After a failure, or an attempt abandoned by a crash or an abort: a new number.
        return (unit.latest_started or 0) + 1

    def pending_samples(self, item_id: str, lane: str) -> list[tuple[Criterion, int, int]]:
        """(criterion, sample, judge_attempt) still to judge for the scored attempt."""
        unit = self.state.unit(item_id, lane)
        attempt = unit.scored_attempt
        if attempt is None:
            return []
        pending = []
        for criterion in self.task(item_id).criteria:
            for sample in range(1, self.judge.samples + 1):
                key = (item_id, lane, attempt, self.regime_id, criterion.criterion_id, sample)
                latest = self.state.verdicts.get(key)
                if latest is None:
                    pending.append((criterion, sample, 1))
                elif latest[1] == "failed":
                    pending.append((criterion, sample, latest[0] + 1))
        return pending

    def unit_complete(self, item_id: str, lane: str) -> bool:
        unit = self.state.unit(item_id, lane)
        if unit.scored_attempt is None:
            return (
                self.research_attempt_due(item_id, lane) is None and unit.latest_attempt is not None
            )
        if (unit.scored_attempt, self.normalizer_version) not in unit.normalized:
            return False
        return not self.pending_samples(item_id, lane)

    # -- the run --

    def load_state(self, log: EventLog) -> None:
        self.state: DracoRunState = read_draco_run_state(log, self.run_id)
        if self.plan is None:
            if self.state.run_started is None:
                raise DracoRunError(f"no rubric-judged run {self.run_id!r} in the log")
            self.ctx.producer = producer_for(self.state.run_started["payload"]["spec"])
            self.lane_names = self.state.lanes()
            self.item_ids = self.state.item_ids()
        self.summary.planned = len(self.item_ids) * len(self.lane_names)
        self.work = [
            (item_id, lane)
            for item_id in self.item_ids
            for lane in self.lane_names
            if not self.unit_complete(item_id, lane)
        ]
        self.summary.skipped_existing = self.summary.planned - len(self.work)

    def execute(self, log: EventLog, on_progress: ProgressCallback | None) -> DracoRunSummary:
        result = run_kernel(log, self.ctx, self, on_progress=on_progress)
        self.summary.absorb(result)
        if result.stop_reason is not None:
            raise DracoRunAborted(result.stop_reason)
        return self.summary

    def is_finished(self) -> bool:
        return (
            self.regime_id in self.state.judge_regimes
            and self.state.terminal_events() in self.state.finished_terminal_counts
        )

    def resources(self):
        # HTTP pools live as long as the run.
        return [lane for lane in self.lanes.values() if hasattr(lane, "__aenter__")]

    def opening(self) -> list[Payload]:
        """Run start, tasks, criteria and the judge regime: facts the writer de-duplicates."""
        payloads: list[Payload] = []
        if self.plan is not None:
            plan = self.plan
            payloads.append(
                RunStarted(
                    benchmark=plan.benchmark,
                    source="engine",
                    spec=plan.spec,
                    spec_sha256=plan.spec_sha256,
                    dataset=plan.dataset,
                    systems=[lane.system_ref() for lane in plan.lanes],
                    argv=self.argv,
                )
            )
            for task in plan.tasks:
                # A resumed run has them already: skip building thousands of repeats that the
                # writer would only discard.
                registered = len(self.state.criteria.get(task.item_id, ()))
                if task.item_id not in self.state.tasks or registered < len(task.criteria):
                    payloads.extend(task_payloads(task, plan.dataset.sha256))
        regime = judge_regime_payload(self.judge, self.normalizer_version, self.argv)
        payloads.append(regime.model_copy(update={"judge_id": self.regime_id}))
        return payloads

    def closing(self, duration_s: float) -> RunFinished | None:
        self.summary.pending = sum(
            1
            for item_id in self.item_ids
            for lane in self.lane_names
            if not self.unit_complete(item_id, lane)
        )
        if self.summary.aborted_lanes or self.summary.pending:
            return None
        units = [self.state.unit(i, lane) for i in self.item_ids for lane in self.lane_names]
        return RunFinished(
            terminal_events=self.state.terminal_events(),
            completed=sum(1 for u in units if u.scored_attempt is not None),
            failed=sum(1 for u in units if u.scored_attempt is None),
            duration_s=duration_s,
        )

    async def process(self, unit_key: tuple[str, str], ctx: RunContext) -> None:
        item_id, lane = unit_key
        if ctx.stopped or lane in self.summary.aborted_lanes:
            return
        attempt = self.research_attempt_due(item_id, lane)
        if attempt is not None:
            async with self.lane_slots[lane]:
                if lane in self.summary.aborted_lanes:
                    return
                await self.research(item_id, lane, attempt)
        unit = self.state.unit(item_id, lane)
        scored = unit.scored_attempt
        if scored is None:
            return
        normalized = unit.normalized.get((scored, self.normalizer_version))
        if normalized is None:
            normalized = await self.normalize(unit.completed[scored])
        await self.judge_unit(item_id, lane, scored, normalized)

    async def research(self, item_id: str, lane_name: str, attempt: int) -> None:
        lane = self.lanes[lane_name]
        task = self.task(item_id)
        instruction = self.plan.instruction.render(problem=task.problem)
        try:
            payload = await lane.research(task, instruction, attempt=attempt, emit=self.append)
        except LaneAborted as abort:
            self.summary.aborted_lanes[lane_name] = str(abort)
            return
        await self.append(payload)
        if isinstance(payload, ResearchCompleted):
            self.summary.researched += 1
        elif isinstance(payload, ResearchFailed):
            self.summary.research_failed += 1

    async def normalize(self, completed: dict[str, Any]) -> dict[str, Any]:
        payload = completed["payload"]
        report = self.normalizer(
            payload["lane"],
            payload["item_id"],
            payload["attempt"],
            completed["event_id"],
            payload["raw_output"],
            [ReportCitation(**c) for c in payload["raw_citations"]],
        )
        await self.append(report)
        self.summary.normalized += 1
        unit = self.state.unit(payload["item_id"], payload["lane"])
        return unit.normalized[(payload["attempt"], report.normalizer_version)]

    async def judge_unit(
        self, item_id: str, lane: str, attempt: int, normalized: dict[str, Any]
    ) -> None:
        task = self.task(item_id)
        judged_text = normalized["payload"]["judged_text"]

        async def one(criterion: Criterion, sample: int, judge_attempt: int) -> None:
            if self.ctx.stopped:
                return
            async with self.judge_slots:
                if self.ctx.stopped:
                    return
                try:
                    result: JudgeSample = await asyncio.to_thread(
                        self.judge.judge, task, criterion, judged_text, sample=sample
                    )
                except (LlmCallError, LlmConfigError) as exc:
                    self.ctx.stop(
                        f"judge {self.regime_id}: {exc}; fix the key and re-run the same "
                        "command to resume"
                    )
                    return
            await self.append(
                JudgeVerdict(
                    lane=lane,
                    item_id=item_id,
                    attempt=attempt,
                    judge_id=self.regime_id,
                    criterion_id=criterion.criterion_id,
                    sample=sample,
                    judge_attempt=judge_attempt,
                    polarity=criterion.polarity,
                    outcome=result.outcome,
                    verdict=result.verdict,
                    met=result.met,
                    justification=result.justification,
                    reasks=result.reasks,
                    error_class=result.error_class,
                    error_message=(
                        self.redactor.text(result.error_message) if result.error_message else None
                    ),
                    source_event_id=normalized["event_id"],
                    llm=result.llm,
                    earlier_calls=list(result.calls[:-1]),
                )
            )
            self.summary.verdicts += 1
            if result.outcome != "parsed":
                self.summary.flagged += 1

        await asyncio.gather(*(one(c, s, a) for c, s, a in self.pending_samples(item_id, lane)))
