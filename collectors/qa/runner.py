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
- A failed grader / judge call is the terminal `provider_call_failed` of its stage ("grade",
  "relevance:<rank>"); score it as the least favourable verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from collectors.http.event_sink import EventSink
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
    relevance_stage,
)
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
    make_event,
)
from warehouse.log import EventLog
from warehouse.provenance import producer_for

MAX_ERROR_CHARS = 2_000
DEFAULT_LLM_CONCURRENCY = 4
ProgressCallback = Callable[[int, int], None]

__all__ = [
    "QaPlan",
    "QaRunAborted",
    "QaRunError",
    "QaRunSummary",
    "execute_plan",
    "plan_qa",
    "run_qa",
]


class QaRunAborted(RuntimeError):
    """A shared LLM role was refused (401/402/403): nothing more can be judged."""


@dataclass
class QaRunSummary:
    run_id: str
    spec_sha256: str
    series: str | None
    run_index: int | None
    planned: int  # (question, lane) units in the spec
    skipped_existing: int  # units complete before this invocation
    completed: int  # units completed by this invocation with a landed answer
    failed: int  # units completed by this invocation with outcome "failed"
    already_finished: bool
    duration_s: float
    events_appended: int = 0  # new lines written (a repeated fact is a no-op, not counted)
    aborted_lanes: dict[str, str] = field(default_factory=dict)
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)  # lane -> outcome -> n
    grades: dict[str, dict[str, int]] = field(default_factory=dict)  # lane -> A/B/C -> n

    @property
    def status(self) -> str:
        if self.already_finished:
            return "already finished"
        if self.aborted_lanes:
            return f"incomplete: {len(self.aborted_lanes)} lane(s) aborted"
        return "finished" if self.failed == 0 else f"finished with {self.failed} failures"


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
    )
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
    runner = _QaRunner(
        log,
        plan,
        retry_failed=retry_failed,
        llm_concurrency=llm_concurrency,
        argv=argv,
        on_progress=on_progress,
    )
    return asyncio.run(runner.run())


def _truncate(message: str) -> str:
    return (
        message if len(message) <= MAX_ERROR_CHARS else f"{message[:MAX_ERROR_CHARS]}… [truncated]"
    )


def _zero_timings(latency_ms: float | None = None) -> CallTimings:
    return CallTimings(queue_wait_ms=0.0, round_trip_ms=None, whole_call_ms=latency_ms or 0.0)


class _QaRunner:
    def __init__(
        self,
        log: EventLog,
        plan: QaPlan,
        *,
        retry_failed: bool,
        llm_concurrency: int,
        argv: Sequence[str],
        on_progress: ProgressCallback | None,
    ):
        self.log = log
        self.plan = plan
        self.retry_failed = retry_failed
        self.llm_concurrency = max(1, llm_concurrency)
        self.argv = list(argv)
        self.on_progress = on_progress
        self.producer = producer_for(plan.spec)
        self.judge_id = plan.relevance_judge.judge_id if plan.relevance_judge else None
        self.state: QaRunState = read_qa_run_state(
            log, plan.run_id, grader_id=plan.grader.grader_id, judge_id=self.judge_id
        )
        self.aborted_lanes: dict[str, str] = {}
        self.run_abort: str | None = None
        self.sink: EventSink | None = None
        self.writer = None  # the LogWriter while the run is open
        self.completed = self.failed = 0
        self.attempts: dict[tuple[str, str], int] = {}

    # -- helpers --

    def event(self, payload: Payload) -> Envelope:
        return make_event(payload, run_id=self.plan.run_id, producer=self.producer)

    async def append(self, envelopes: list[Envelope]) -> None:
        """Durably write (group commit with other units), then fold into the state."""
        assert self.sink is not None
        await asyncio.gather(*(self.sink.append(envelope) for envelope in envelopes))
        for envelope in envelopes:
            self.state.record(envelope.model_dump())

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
        if lane.needs_search and (unit.search is None or unit.search_class == "auth"):
            return False
        if lane.needs_search and unit.search_class == "usable" and unit.chunks is None:
            return False
        if unit.answer is None:
            return False
        if unit.outcome != "failed" and unit.grade is None:
            return False
        if self.plan.relevance_judge is None:
            return True
        return all(c["rank"] in unit.relevance for c in unit.chunk_list or [])

    def stopped(self, lane: QaLane) -> bool:
        return self.run_abort is not None or lane.name in self.aborted_lanes

    # -- the run --

    async def run(self) -> QaRunSummary:
        clock = time.monotonic()
        plan = self.plan
        work: list[tuple[SelectedQuestion, QaLane, int]] = []
        skipped = 0
        for selected in plan.selected:
            for lane in plan.lanes:
                attempt = self.current_attempt(selected.question.item_id, lane)
                # Fixed for this invocation: a retried unit that fails again is done for now.
                self.attempts[(selected.question.item_id, lane.name)] = attempt
                unit = self.state.unit(selected.question.item_id, lane.name, attempt)
                if self.unit_complete(unit, lane):
                    skipped += 1
                else:
                    work.append((selected, lane, attempt))

        def summary(already: bool = False) -> QaRunSummary:
            return QaRunSummary(
                run_id=plan.run_id,
                spec_sha256=plan.spec_sha256,
                series=plan.series,
                run_index=plan.run_index,
                planned=len(plan.units),
                skipped_existing=skipped,
                completed=self.completed,
                failed=self.failed,
                already_finished=already,
                duration_s=round(time.monotonic() - clock, 3),
                events_appended=self.writer.appended if self.writer else 0,
                aborted_lanes=dict(self.aborted_lanes),
                outcomes=self._outcomes(),
                grades=self._grades(),
            )

        if not work and self.state.is_finished:
            return summary(already=True)

        self.llm_slots = asyncio.Semaphore(self.llm_concurrency)
        # A lane's slots bound its searches in flight; synthesis and judging wait on the LLM
        # slots instead, so a slow judge never holds a lane's search capacity.
        self.lane_slots = {
            lane.name: asyncio.Semaphore(max(1, lane.concurrency)) for lane in plan.lanes
        }
        total, done = len(work), 0
        if self.on_progress:
            self.on_progress(0, total)
        async with contextlib.AsyncExitStack() as stack:
            # Shared lane resources (an HTTP pool + throttles) live exactly as long as the run.
            for resource in {
                id(r): r for lane in plan.lanes if (r := getattr(lane, "resource", None))
            }.values():
                await stack.enter_async_context(resource)
            self.writer = writer = stack.enter_context(self.log.writer())
            self.sink = EventSink(writer)
            await self.append(
                [
                    self.event(
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
                    )
                ]
            )

            async def one(selected: SelectedQuestion, lane: QaLane, attempt: int) -> None:
                nonlocal done
                await self.process_unit(selected, lane, attempt)
                done += 1
                if self.on_progress:
                    self.on_progress(done, total)

            tasks = [asyncio.create_task(one(s, lane, a)) for s, lane, a in work]
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                # A crash or Ctrl-C: stop the other units, but let every event already handed
                # to the sink reach the disk before the writer closes.
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                await self.sink.drain()
                raise
            await self.sink.drain()
            if self.run_abort is None and not self.aborted_lanes and self._all_complete():
                await self.append(
                    [
                        self.event(
                            RunFinished(
                                terminal_events=self.state.terminal_events,
                                completed=sum(
                                    1 for o in self._unit_outcomes() if o not in (None, "failed")
                                ),
                                failed=sum(1 for o in self._unit_outcomes() if o == "failed"),
                                duration_s=round(time.monotonic() - clock, 3),
                            )
                        )
                    ]
                )
        if self.run_abort is not None:
            raise QaRunAborted(self.run_abort)
        return summary()

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

    def _outcomes(self) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = {}
        for lane, unit in self._latest_units():
            if unit.outcome is not None:
                lane_counts = counts.setdefault(lane.name, {})
                lane_counts[unit.outcome] = lane_counts.get(unit.outcome, 0) + 1
        return counts

    def _grades(self) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = {}
        for lane, unit in self._latest_units():
            if unit.grade is not None and unit.grade["event_type"] == "answer_graded":
                letter = unit.grade["payload"]["grade"]
                lane_counts = counts.setdefault(lane.name, {})
                lane_counts[letter] = lane_counts.get(letter, 0) + 1
        return counts

    async def llm(self, function, *args):
        async with self.llm_slots:
            return await asyncio.to_thread(function, *args)

    def llm_failure(
        self, exc: LlmCallError, stage: str, lane: QaLane, item_id: str, attempt: int
    ) -> Envelope | None:
        """The failed call as an event, or None after aborting the run on an auth error."""
        if exc.is_auth:
            self.run_abort = (
                f"{stage}: {exc.provider} refused the key for model {exc.model} (HTTP {exc.status_code}); "
                "fix the key and re-run the same command to resume"
            )
            return None
        request = exc.request or {}
        return self.event(
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
                error_message=_truncate(exc.message),
                status_code=exc.status_code,
                landed=exc.landed,
                raw_body=exc.raw_body,
                timings=_zero_timings(exc.latency_ms),
                http_attempts=0 if exc.status_code is None else 1,
                concurrency=self.llm_concurrency,
            )
        )

    async def process_unit(self, selected: SelectedQuestion, lane: QaLane, attempt: int) -> None:
        question = selected.question
        item_id = question.item_id
        unit = self.state.unit(item_id, lane.name, attempt)
        pending: list[Envelope] = []
        if item_id not in self.state.registered:
            pending.append(
                self.event(question_registered(selected, self.plan.dataset.dataset.sha256))
            )

        # 1. search
        if lane.needs_search and (unit.search is None or unit.search_class == "auth"):
            async with self.lane_slots[lane.name]:
                if self.stopped(lane):
                    return
                call = await lane.search(question.problem, item_id=item_id, attempt=attempt)
            await self.append([*pending, self.event(call)])
            pending = []
            if unit.search_class == "auth":
                # The payload's message names the reason (key rejected, credits, plan limit).
                self.aborted_lanes.setdefault(
                    lane.name,
                    f"lane {lane.name}: {lane.provider} refused the key ({call.error_message}); the "
                    "lane is aborted — fix the key or its plan and re-run the same command to resume",
                )
                return

        # 2. chunks
        search_class = unit.search_class if lane.needs_search else None
        if search_class == "usable" and unit.chunks is None:
            if self.stopped(lane):
                return
            await self.append([*pending, self.normalize(lane, unit.search, item_id, attempt)])
            pending = []

        # 3. synthesis
        if unit.answer is None:
            if self.stopped(lane):
                return
            await self.append([*pending, *await self.synthesize(selected, lane, unit, attempt)])
            pending = []
            if self.run_abort is not None:
                return

        # 4. grade
        if unit.outcome != "failed" and unit.grade is None:
            if self.stopped(lane):
                return
            graded = await self.grade(selected, lane, unit, attempt)
            if graded is None:
                return
            await self.append([graded])

        # 5. relevance, one verdict per chunk
        chunks = unit.chunk_list or []
        judge = self.plan.relevance_judge
        todo = [Chunk(**c) for c in chunks if c["rank"] not in unit.relevance] if judge else []
        if todo:
            if self.stopped(lane):
                return
            verdicts = await asyncio.gather(
                *(self.judge(question.problem, lane, unit, chunk, attempt) for chunk in todo)
            )
            done = [v for v in verdicts if v is not None]
            if done:
                await self.append(done)
            if self.run_abort is not None:
                return

        if pending:
            await self.append(pending)
        if self.unit_complete(unit, lane):
            if unit.outcome == "failed":
                self.failed += 1
            else:
                self.completed += 1

    def normalize(
        self, lane: QaLane, search: dict[str, Any], item_id: str, attempt: int
    ) -> Envelope:
        call = ProviderCallCompleted.model_validate(search["payload"])
        try:
            chunks = lane.normalize(call)
        except Exception as exc:  # an unusable body is a fact to record, not a crash
            return self.event(
                ProviderCallFailed(
                    lane=lane.name,
                    provider=call.provider,
                    stage=NORMALIZE,
                    item_id=item_id,
                    attempt=attempt,
                    request=call.request,
                    error_class="malformed_body",
                    error_message=_truncate(
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
        return self.event(
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
            return self.event(
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
        item_id = selected.question.item_id
        source = unit.answer["event_id"]
        if unit.outcome != "answered":  # landed non-answer: a miss by rule, no grader call
            return self.event(
                AnswerGraded(
                    lane=lane.name,
                    item_id=item_id,
                    attempt=attempt,
                    grader_id=grader.grader_id,
                    official=grader.official,
                    grade="C",
                    label="not_attempted",
                    parse_ok=True,
                    source_event_id=source,
                    llm=None,
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
            return self.llm_failure(exc, GRADE, lane, item_id, attempt)
        return self.event(
            AnswerGraded(
                lane=lane.name,
                item_id=item_id,
                attempt=attempt,
                grader_id=grader.grader_id,
                official=grader.official,
                grade=verdict.grade,
                label=verdict.label,
                parse_ok=verdict.parse_ok,
                source_event_id=source,
                llm=verdict.llm,
            )
        )

    async def judge(
        self, query: str, lane: QaLane, unit: UnitAttempt, chunk: Chunk, attempt: int
    ) -> Envelope | None:
        judge = self.plan.relevance_judge
        item_id = unit.chunks["payload"]["item_id"]
        try:
            verdict = await self.llm(judge.judge, query, chunk)
        except LlmCallError as exc:
            return self.llm_failure(exc, relevance_stage(chunk.rank), lane, item_id, attempt)
        return self.event(
            RelevanceGraded(
                lane=lane.name,
                item_id=item_id,
                attempt=attempt,
                rank=chunk.rank,
                judge_id=judge.judge_id,
                grade=verdict.grade,
                parse_ok=verdict.parse_ok,
                source_event_id=unit.chunks["event_id"],
                llm=verdict.llm,
            )
        )
