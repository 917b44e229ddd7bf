"""SimpleQA lanes and user question sets: plan -> resumable staged work -> events.

A run is a frozen spec: dataset sha256, the selected item ids (seeded upstream sampler),
lanes with their settings, synthesiser, grader and relevance judge settings, and for a
repeat-run series its name and run index. The run id is derived from the spec, so the same
command names the same run and re-running it resumes.

Per (question, lane) unit the stages run in order: search -> chunks_normalized ->
answer_synthesized -> answer_graded -> relevance_graded per chunk. Each stage's events are
appended (fsync'd) as soon as the stage ends, so a SIGKILL loses at most work in flight; each
stage resumes on its own (remaining = spec - stage events present, see `run_state`).

Outcomes (methodology 2.3), in `answer_synthesized.outcome`:
- "failed": the search never landed (network, timeout, 5xx/429 after retries, other 4xx), its
  body could not be normalised, or the synthesiser call failed. No grade: excluded from
  accuracy, counted in the failure rate (the stage of the failed call says whose failure).
- "rejected" (search 400/422), "zero_results", "refused" (empty completion, or the LLM
  provider answered 400/422): landed non-answers, graded C by rule with no grader call
  (`answer_graded.llm` is null).
- 401/402/403 on a search aborts that lane with a message (logged, not terminal: the unit is
  retried as the next attempt once the key works); on the synthesiser, grader or judge it
  aborts the run (`QaRunAborted`) without logging the refused call.
- A failed grader / relevance judge call is its stage's terminal event with outcome "failed"
  and the least favourable verdict (`answer_graded` B / incorrect, `relevance_graded` 0), as a
  failed DRACO judge call is a `judge_verdict`: one shape for a failed judgement in every family.
  It is not retried on resume (the grade's natural key has no judge attempt).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from collectors.llm.base import LlmCallError
from collectors.qa.dataset import QaDataset, SelectedQuestion, question_registered
from collectors.qa.lanes import QaLane
from collectors.qa.plan import QaPlan, QaRunError, plan_qa
from collectors.qa.roles import Grader, RelevanceJudge, Synthesizer
from collectors.qa.run_state import (
    GRADE,
    NORMALIZE,
    REJECTED_STATUSES,
    SYNTHESIZE,
    QaRunState,
    UnitAttempt,
    read_qa_run_state,
    refuses_the_key,
    relevance_stage,
)
from collectors.runs.kernel import ProgressCallback, RunContext, RunStages, run_kernel
from collectors.runs.messages import truncate_message
from collectors.runs.shard import Shard
from collectors.runs.summary import RunSummary
from warehouse.events import (
    AnswerGraded,
    AnswerSynthesized,
    CallTimings,
    Chunk,
    ChunksNormalized,
    Envelope,
    Payload,
    ProviderCallCompleted,
    ProviderCallFailed,
    RecordedRequest,
    RelevanceGraded,
    RunFinished,
    RunStarted,
)
from warehouse.log import EventLog
from warehouse.provenance import producer_for

DEFAULT_LLM_CONCURRENCY = 4

__all__ = [
    "QaPlan",
    "QaRunAborted",
    "QaRunError",
    "QaRunSummary",
    "execute_plan",
    "plan_qa",
    "run_qa",
]

Unit = tuple[SelectedQuestion, QaLane, int]  # (question, lane, attempt)


class QaRunAborted(RuntimeError):
    """A shared LLM role was refused (401/402/403): nothing more can be judged."""


@dataclass(kw_only=True)
class QaRunSummary(RunSummary):
    series: str | None
    run_index: int | None
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)  # lane -> outcome -> n
    grades: dict[str, dict[str, int]] = field(default_factory=dict)  # lane -> A/B/C -> n


def run_qa(
    log: EventLog,
    dataset: QaDataset,
    lanes: Sequence[QaLane],
    *,
    limit: int | None,
    random_state: int = 0,
    synthesizer: Synthesizer,
    grader: Grader,
    relevance_judge: RelevanceJudge | None = None,
    series: str | None = None,
    retry_failed: bool = False,
    llm_concurrency: int = DEFAULT_LLM_CONCURRENCY,
    argv: Sequence[str] = (),
    on_progress: ProgressCallback | None = None,
    shard: Shard | None = None,
) -> QaRunSummary:
    plan = plan_qa(
        dataset,
        lanes,
        limit=limit,
        random_state=random_state,
        synthesizer=synthesizer,
        grader=grader,
        relevance_judge=relevance_judge,
        series=series,
        log=log,
    ).for_shard(shard)
    return execute_plan(
        log,
        plan,
        retry_failed=retry_failed,
        llm_concurrency=llm_concurrency,
        argv=argv,
        on_progress=on_progress,
    )


def execute_plan(
    log: EventLog,
    plan: QaPlan,
    *,
    retry_failed: bool = False,
    llm_concurrency: int = DEFAULT_LLM_CONCURRENCY,
    argv: Sequence[str] = (),
    on_progress: ProgressCallback | None = None,
) -> QaRunSummary:
    ctx = RunContext(plan.run_id, producer_for(plan.spec))
    stages = _QaStages(plan, ctx, retry_failed, llm_concurrency, argv)
    result = run_kernel(log, ctx, stages, on_progress=on_progress)
    if result.stop_reason is not None:
        raise QaRunAborted(result.stop_reason)
    summary = QaRunSummary(
        run_id=plan.run_id,
        spec_sha256=plan.spec_sha256,
        series=plan.series,
        run_index=plan.run_index,
        planned=len(plan.units),
        skipped_existing=stages.skipped,
        completed=stages.completed,
        failed=stages.failed,
        aborted_lanes=dict(stages.aborted_lanes),
        outcomes=stages.outcomes(),
        grades=stages.grades(),
    )
    summary.absorb(result)
    return summary


def _failure(exc: LlmCallError) -> dict[str, str]:
    """A failed judgement's reason, as DRACO's judge records it (provider, model, status and
    message in one line)."""
    return {"error_class": exc.error_class, "error_message": truncate_message(str(exc))}


def _zero_timings(latency_ms: float | None = None) -> CallTimings:
    return CallTimings(queue_wait_ms=0.0, round_trip_ms=None, whole_call_ms=latency_ms or 0.0)


class _QaStages(RunStages[Unit]):
    """The five stages of a (question, lane) unit; the kernel owns the run around them."""

    def __init__(
        self,
        plan: QaPlan,
        ctx: RunContext,
        retry_failed: bool,
        llm_concurrency: int,
        argv: Sequence[str],
    ):
        self.plan = plan
        self.shard = plan.shard
        self.ctx = ctx
        self.retry_failed = retry_failed
        self.llm_concurrency = max(1, llm_concurrency)
        self.argv = list(argv)
        self.aborted_lanes: dict[str, str] = {}
        self.completed = self.failed = self.skipped = 0
        self.llm_slots = asyncio.Semaphore(self.llm_concurrency)
        # A lane's slots bound its searches in flight; synthesis and judging wait on the LLM
        # slots instead, so a slow judge never holds a lane's search capacity.
        self.lane_slots = {
            lane.name: asyncio.Semaphore(max(1, lane.concurrency)) for lane in plan.lanes
        }
        # Fixed for this invocation: a retried unit that fails again is done for now.
        self.attempts: dict[tuple[str, str], int] = {}
        self.work: list[Unit] = []

    # -- the kernel's questions --

    def load_state(self, log: EventLog) -> None:
        plan = self.plan
        judge_id = plan.relevance_judge.judge_id if plan.relevance_judge else None
        self.state: QaRunState = read_qa_run_state(
            log, plan.run_id, grader_id=plan.grader.grader_id, judge_id=judge_id
        )
        for selected in plan.selected:
            for lane in plan.lanes:
                attempt = self.current_attempt(selected.question.item_id, lane)
                self.attempts[(selected.question.item_id, lane.name)] = attempt
                if self.unit_complete(self.unit(selected, lane, attempt), lane):
                    self.skipped += 1
                else:
                    self.work.append((selected, lane, attempt))

    def resources(self):
        # Shared lane resources (an HTTP pool + throttles) live exactly as long as the run.
        return {
            id(r): r for lane in self.plan.lanes if (r := getattr(lane, "resource", None))
        }.values()

    def opening(self) -> list[Payload]:
        plan = self.plan
        return [
            RunStarted(
                benchmark=plan.dataset.benchmark,
                source="engine",
                spec=plan.spec,
                spec_sha256=plan.spec_sha256,
                dataset=plan.dataset.dataset,
                systems=[lane.system_ref() for lane in plan.lanes],
                seed=plan.random_state,
                argv=self.argv,
                series=plan.series,
                run_index=plan.run_index,
            )
        ]

    def closing(self, duration_s: float) -> RunFinished | None:
        if self.aborted_lanes or not self._all_complete():
            return None
        outcomes = self._unit_outcomes()
        return RunFinished(
            terminal_events=self.state.terminal_events,
            completed=sum(1 for o in outcomes if o not in (None, "failed")),
            failed=sum(1 for o in outcomes if o == "failed"),
            duration_s=duration_s,
        )

    # -- what is left --

    def unit(self, selected: SelectedQuestion, lane: QaLane, attempt: int) -> UnitAttempt:
        """The unit's stage events so far (re-read after every append: it folds into this)."""
        return self.state.unit(selected.question.item_id, lane.name, attempt)

    def current_attempt(self, item_id: str, lane: QaLane) -> int:
        latest = self.state.latest_attempt(item_id, lane.name)
        if latest is None:
            return 1
        unit = self.state.unit(item_id, lane.name, latest)
        if unit.search_class == "auth":
            return latest + 1
        if self.retry_failed and unit.outcome == "failed":
            return latest + 1
        return latest

    def unit_complete(self, unit: UnitAttempt, lane: QaLane) -> bool:
        return not any(due(self, unit, lane) for due, _run in self.STAGES)

    def stopped(self, lane: QaLane) -> bool:
        return self.ctx.stopped or lane.name in self.aborted_lanes

    # -- the stages: (is it due for this unit?, run it -> events to append) --

    def search_due(self, unit: UnitAttempt, lane: QaLane) -> bool:
        return lane.needs_search and (unit.search is None or unit.search_class == "auth")

    def chunks_due(self, unit: UnitAttempt, lane: QaLane) -> bool:
        return lane.needs_search and unit.search_class == "usable" and unit.chunks is None

    def answer_due(self, unit: UnitAttempt, lane: QaLane) -> bool:
        return unit.answer is None

    def grade_due(self, unit: UnitAttempt, lane: QaLane) -> bool:
        return unit.outcome != "failed" and unit.grade is None

    def relevance_due(self, unit: UnitAttempt, lane: QaLane) -> bool:
        return bool(self.unjudged_chunks(unit))

    def unjudged_chunks(self, unit: UnitAttempt) -> list[Chunk]:
        if self.plan.relevance_judge is None:
            return []
        return [Chunk(**c) for c in unit.chunk_list or [] if c["rank"] not in unit.relevance]

    async def run_search(self, selected: SelectedQuestion, lane: QaLane, attempt: int):
        item_id = selected.question.item_id
        async with self.lane_slots[lane.name]:
            if self.stopped(lane):
                return None
            found = await lane.search(selected.question.problem, item_id=item_id, attempt=attempt)
            # A product that answers later returns its submit too; the last is the unit's call.
            calls = found if isinstance(found, tuple) else (found,)
            call = calls[-1]
            if refuses_the_key(call.status_code, getattr(call, "error_class", None)):
                # Stop the lane now, not once the refusal is durably written: every unit given
                # a slot meanwhile would send a call the vendor refuses the same way.
                self.abort_lane(lane, getattr(call, "error_message", None))
            return list(calls)

    async def run_chunks(self, selected: SelectedQuestion, lane: QaLane, attempt: int):
        unit = self.unit(selected, lane, attempt)
        return [self.normalize(lane, unit.search, selected.question.item_id, attempt)]

    async def run_answer(self, selected: SelectedQuestion, lane: QaLane, attempt: int):
        return await self.synthesize(selected, lane, self.unit(selected, lane, attempt), attempt)

    async def run_grade(self, selected: SelectedQuestion, lane: QaLane, attempt: int):
        graded = await self.grade(selected, lane, self.unit(selected, lane, attempt), attempt)
        return None if graded is None else [graded]

    async def run_relevance(self, selected: SelectedQuestion, lane: QaLane, attempt: int):
        unit = self.unit(selected, lane, attempt)
        verdicts = await asyncio.gather(
            *(
                self.judge(selected.question.problem, lane, unit, chunk, attempt)
                for chunk in self.unjudged_chunks(unit)
            )
        )
        return [v for v in verdicts if v is not None]

    STAGES = (
        (search_due, run_search),
        (chunks_due, run_chunks),
        (answer_due, run_answer),
        (grade_due, run_grade),
        (relevance_due, run_relevance),
    )

    async def process(self, unit_key: Unit, ctx: RunContext) -> None:
        """Run the unit's due stages in order, appending each stage's events as it ends.
        A stage returning None appended nothing and ends the unit for this invocation (the
        lane or the run stopped); the unit's state is re-read before every stage."""
        selected, lane, attempt = unit_key
        pending = self.registration(selected)
        for due, run in self.STAGES:
            if not due(self, self.unit(selected, lane, attempt), lane):
                continue
            if self.stopped(lane):
                return
            envelopes = await run(self, selected, lane, attempt)
            if envelopes is None:
                return
            await ctx.append(*pending, *envelopes)
            pending = []
            if self.ended(self.unit(selected, lane, attempt), lane):
                return
        await ctx.append(*pending)
        self.count(self.unit(selected, lane, attempt), lane)

    def registration(self, selected: SelectedQuestion) -> list[Payload]:
        """question_registered, once per question: it goes out with the unit's first append."""
        if selected.question.item_id in self.state.registered:
            return []
        return [question_registered(selected, self.plan.dataset.dataset.sha256)]

    def ended(self, unit: UnitAttempt, lane: QaLane) -> bool:
        """After a stage: a search refused the key (`run_search` aborted the lane) or the run
        stopped."""
        return unit.search_class == "auth" or self.ctx.stopped

    def count(self, unit: UnitAttempt, lane: QaLane) -> None:
        if self.unit_complete(unit, lane):
            if unit.outcome == "failed":
                self.failed += 1
            else:
                self.completed += 1

    def abort_lane(self, lane: QaLane, reason: str | None) -> None:
        # The payload's message names the reason (key rejected, credits, plan limit).
        self.aborted_lanes.setdefault(
            lane.name,
            f"lane {lane.name}: {lane.provider} refused the key ({reason}); the "
            "lane is aborted — fix the key or its plan and re-run the same command to resume",
        )

    def _all_complete(self) -> bool:
        return all(
            self.unit_complete(
                self.state.unit(item_id, lane.name, self.attempts[(item_id, lane.name)]), lane
            )
            for item_id in (s.question.item_id for s in self.plan.selected)
            for lane in self.plan.lanes
        )

    def _latest_units(self):
        for selected in self.plan.selected:
            for lane in self.plan.lanes:
                latest = self.state.latest_attempt(selected.question.item_id, lane.name)
                if latest is not None:
                    yield lane, self.state.unit(selected.question.item_id, lane.name, latest)

    def _unit_outcomes(self) -> list[str | None]:
        return [unit.outcome for _lane, unit in self._latest_units()]

    def outcomes(self) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = {}
        for lane, unit in self._latest_units():
            if unit.outcome is not None:
                lane_counts = counts.setdefault(lane.name, {})
                lane_counts[unit.outcome] = lane_counts.get(unit.outcome, 0) + 1
        return counts

    def grades(self) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = {}
        for lane, unit in self._latest_units():
            if unit.grade is not None and unit.grade["event_type"] == "answer_graded":
                payload = unit.grade["payload"]
                # a failed grader call scores B, but the summary says what happened
                letter = "call failed" if payload.get("outcome") == "failed" else payload["grade"]
                lane_counts = counts.setdefault(lane.name, {})
                lane_counts[letter] = lane_counts.get(letter, 0) + 1
        return counts

    async def llm(self, function, *args):
        async with self.llm_slots:
            return await asyncio.to_thread(function, *args)

    def aborted_on_auth(self, exc: LlmCallError, stage: str) -> bool:
        """An auth rejection stops the run, unlogged (the next invocation resumes the unit)."""
        if exc.is_auth:
            self.ctx.stop(
                f"{stage}: {exc.provider} refused the key for model {exc.model} (HTTP {exc.status_code}); "
                "fix the key and re-run the same command to resume"
            )
        return exc.is_auth

    def llm_failure(
        self, exc: LlmCallError, stage: str, lane: QaLane, item_id: str, attempt: int
    ) -> Envelope | None:
        """The failed call as an event, or None after aborting the run on an auth error."""
        if self.aborted_on_auth(exc, stage):
            return None
        request = exc.request or {}
        return self.ctx.event(
            ProviderCallFailed(
                lane=lane.name,
                provider=exc.provider,
                stage=stage,
                item_id=item_id,
                attempt=attempt,
                request=RecordedRequest(
                    method=request.get("method", "POST"),
                    url=request.get("url", ""),
                    body=request.get("body"),
                ),
                error_class=exc.error_class,
                error_message=truncate_message(exc.message),
                status_code=exc.status_code,
                landed=exc.landed,
                raw_body=exc.raw_body,
                timings=_zero_timings(exc.latency_ms),
                http_attempts=0 if exc.status_code is None else 1,
                concurrency=self.llm_concurrency,
            )
        )

    def normalize(
        self, lane: QaLane, search: dict[str, Any], item_id: str, attempt: int
    ) -> Envelope:
        call = ProviderCallCompleted.model_validate(search["payload"])
        try:
            chunks = lane.normalize(call)
        except Exception as exc:  # an unusable body is a fact to record, not a crash
            return self.ctx.event(
                ProviderCallFailed(
                    lane=lane.name,
                    provider=call.provider,
                    stage=NORMALIZE,
                    item_id=item_id,
                    attempt=attempt,
                    request=call.request,
                    error_class="malformed_body",
                    error_message=truncate_message(
                        f"{lane.normalizer_version}: {type(exc).__name__}: {exc}"
                    ),
                    status_code=call.status_code,
                    landed=True,
                    raw_body=None,
                    timings=_zero_timings(),
                    http_attempts=0,
                    concurrency=call.concurrency,
                )
            )
        return self.ctx.event(
            ChunksNormalized(
                lane=lane.name,
                item_id=item_id,
                attempt=attempt,
                normalizer_version=lane.normalizer_version,
                source_event_id=search["event_id"],
                chunks=chunks,
            )
        )

    async def synthesize(
        self, selected: SelectedQuestion, lane: QaLane, unit: UnitAttempt, attempt: int
    ) -> list[Envelope]:
        item_id = selected.question.item_id

        def answer(outcome: str, sources: list[str], **fields: Any) -> Envelope:
            return self.ctx.event(
                AnswerSynthesized(
                    lane=lane.name,
                    item_id=item_id,
                    attempt=attempt,
                    outcome=outcome,
                    answer=fields.get("answer"),
                    chunk_ranks_used=fields.get("ranks", []),
                    source_event_ids=sources,
                    llm=fields.get("llm"),
                )
            )

        if lane.needs_search:
            search_class = unit.search_class
            if search_class in ("failed", "rejected"):
                return [answer(search_class, [unit.search["event_id"]])]
            if unit.chunk_list is None:  # the body could not be normalised
                return [answer("failed", [unit.search["event_id"], unit.chunks["event_id"]])]
            chunks = [Chunk(**c) for c in unit.chunk_list]
            sources = [unit.chunks["event_id"]]
            own_answer = getattr(lane, "own_answer", None)  # collectors.qa.answer_lanes
            if own_answer is not None:  # the vendor answered itself: record it, synthesise none
                call = ProviderCallCompleted.model_validate(unit.search["payload"])
                outcome, text = own_answer(call)
                ranks = [c.rank for c in chunks]
                return [
                    answer(outcome, [unit.search["event_id"], *sources], answer=text, ranks=ranks)
                ]
            if not chunks:
                return [answer("zero_results", sources)]
        else:
            chunks, sources = [], []
        try:
            synthesis = await self.llm(
                self.plan.synthesizer.synthesize, selected.question.problem, chunks
            )
        except LlmCallError as exc:
            failed = self.llm_failure(exc, SYNTHESIZE, lane, item_id, attempt)
            if failed is None:
                return []
            # 400/422: the model's provider refused this prompt, a landed non-answer; any other
            # status (a wrong model name, 5xx after retries) is a failure, not the lane's miss.
            outcome = "refused" if exc.status_code in REJECTED_STATUSES else "failed"
            return [failed, answer(outcome, [*sources, failed.event_id])]
        return [
            answer(
                synthesis.outcome,
                sources,
                answer=synthesis.answer,
                ranks=synthesis.chunk_ranks_used,
                llm=synthesis.llm,
            )
        ]

    async def grade(
        self, selected: SelectedQuestion, lane: QaLane, unit: UnitAttempt, attempt: int
    ) -> Envelope | None:
        grader = self.plan.grader
        of_this_answer = dict(
            lane=lane.name,
            item_id=selected.question.item_id,
            attempt=attempt,
            grader_id=grader.grader_id,
            official=grader.official,
            source_event_id=unit.answer["event_id"],
        )
        if unit.outcome != "answered":  # landed non-answer: a miss by rule, no grader call
            return self.ctx.event(
                AnswerGraded(
                    **of_this_answer,
                    outcome="parsed",  # decided by rule: nothing to parse, nothing failed
                    grade="C",
                    label="not_attempted",
                    parse_ok=True,
                )
            )
        try:
            verdict = await self.llm(
                grader.grade,
                selected.question.problem,
                selected.question.gold_answer,
                unit.answer["payload"]["answer"] or "",
            )
        except LlmCallError as exc:
            if self.aborted_on_auth(exc, GRADE):
                return None
            return self.ctx.event(
                AnswerGraded(
                    **of_this_answer,
                    outcome="failed",
                    grade="B",  # least favourable: counted incorrect, never "not attempted"
                    label="incorrect",
                    parse_ok=False,
                    **_failure(exc),
                )
            )
        return self.ctx.event(
            AnswerGraded(
                **of_this_answer,
                outcome="parsed" if verdict.parse_ok else "unparsed",
                grade=verdict.grade,
                label=verdict.label,
                parse_ok=verdict.parse_ok,
                llm=verdict.llm,
            )
        )

    async def judge(
        self, query: str, lane: QaLane, unit: UnitAttempt, chunk: Chunk, attempt: int
    ) -> Envelope | None:
        judge = self.plan.relevance_judge
        of_this_chunk = dict(
            lane=lane.name,
            item_id=unit.chunks["payload"]["item_id"],
            attempt=attempt,
            rank=chunk.rank,
            judge_id=judge.judge_id,
            source_event_id=unit.chunks["event_id"],
        )
        try:
            verdict = await self.llm(judge.judge, query, chunk)
        except LlmCallError as exc:
            if self.aborted_on_auth(exc, relevance_stage(chunk.rank)):
                return None
            return self.ctx.event(
                RelevanceGraded(
                    **of_this_chunk,
                    outcome="failed",
                    grade=0,  # least favourable: not relevant
                    parse_ok=False,
                    **_failure(exc),
                )
            )
        return self.ctx.event(
            RelevanceGraded(
                **of_this_chunk,
                outcome="parsed" if verdict.parse_ok else "unparsed",
                grade=verdict.grade,
                parse_ok=verdict.parse_ok,
                llm=verdict.llm,
            )
        )
