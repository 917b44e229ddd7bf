"""A DRACO warehouse fixture built from events, the way the runner writes them.

* `registration_run`: all 100 real tasks of the pinned DRACO file registered by one run (no
  lanes, no judge): the dataset dimensions must match the published counts.
* `scored_run`: 8 real tasks (with the Medicine tasks whose penalties reach -300 / -500) x 3 lanes
  x every criterion x 3 samples under judge regime J1, then a rejudge J2 (1 sample) on the same
  run. Deterministic pseudo-random verdicts include unparsed and failed samples on positive and
  negative criteria (met already least favourable), failed samples retried as judge_attempt 2,
  a research retry (attempt 1 failed, attempt 2 scored), a failed item (every attempt failed),
  an item with missing verdicts (incomplete), an item whose report was never normalised
  (incomplete, unreported), billed costs (Exa) and seed-priced lanes.

Events go through the real log writer and the real dlt ingest (ingest.pipeline.ingest_log).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path

from raw_events_fixture import PRODUCER, Clock

from collectors.draco.dataset import dataset_ref, load_draco, registration_payloads
from collectors.draco.model import RubricTask, RubricTaskSet
from warehouse.events import (
    Envelope,
    JudgeRegimeRegistered,
    JudgeVerdict,
    LlmCallRecord,
    ReportNormalized,
    ResearchCompleted,
    ResearchFailed,
    RunStarted,
    SystemRef,
    make_event,
)

DRACO_JSONL = Path("/work/shared/data/draco/test.jsonl")
LANES = ("exa_deep_reasoning", "parallel_task_ultra8x", "valyu_heavy")
PROVIDERS = {
    "exa_deep_reasoning": "exa",
    "parallel_task_ultra8x": "parallel",
    "valyu_heavy": "valyu",
}
SKILL = {"exa_deep_reasoning": 0.45, "parallel_task_ultra8x": 0.65, "valyu_heavy": 0.8}
# rows of the file: 0c2c668a (Academic), f0bed5aa (Finance), ca0edd2d (Needle), cd19ee22 (Medicine,
# -300), two Medicine tasks with -200 / -500 penalties, and a few others
TASK_ROWS = (0, 1, 3, 4, 9, 10, 62, 64)
J1 = "draco-judge@test:claude-test"
J2 = "draco-judge@test:gemini-test"
NORMALIZER = "1"
INSTRUCTION_SHA = "a" * 64

FAILED_ITEM = ("parallel_task_ultra8x", 4)  # every attempt fails
RETRIED_ITEM = ("valyu_heavy", 1)  # attempt 1 fails, attempt 2 is scored
INCOMPLETE_ITEM = ("exa_deep_reasoning", 2)  # some verdicts of J1 missing
UNREPORTED_ITEM = ("exa_deep_reasoning", 5)  # research done, report never normalised
J2_UNJUDGED_ITEM = ("valyu_heavy", 0)  # the rejudge has not reached it


@dataclass
class Fixture:
    task_set: RubricTaskSet
    tasks: tuple[RubricTask, ...]
    scored_run_id: str
    registration_run_id: str
    events: list[Envelope] = field(default_factory=list)


def draco_tasks() -> RubricTaskSet:
    return load_draco(DRACO_JSONL)


def _emitter(run_id: str, clock: Clock, events: list[Envelope]):
    def emit(payload) -> Envelope:
        envelope = make_event(payload, run_id=run_id, producer=PRODUCER, occurred_at=clock.tick())
        events.append(envelope)
        return envelope

    return emit


def registration_run(task_set: RubricTaskSet, clock: Clock) -> tuple[str, list[Envelope]]:
    run_id = "draco-registration-run"
    events: list[Envelope] = []
    emit = _emitter(run_id, clock, events)
    emit(
        RunStarted(
            benchmark="draco",
            spec={"name": "register-all"},
            spec_sha256="e" * 64,
            dataset=dataset_ref(task_set),
            systems=[],
        )
    )
    for payload in registration_payloads(task_set):
        emit(payload)
    return run_id, events


def _verdict_outcome(rng: random.Random, negative: bool, skill: float):
    """(outcome, verdict, met) of one sample; unparsed / failed get the least favourable met."""
    roll = rng.random()
    if roll < 0.05:
        return "unparsed", None, negative
    if roll < 0.08:
        return "failed", None, negative
    # a weak system commits more of the errors a penalty describes
    met = rng.random() < (0.2 * (1.2 - skill) if negative else skill)
    return "parsed", "MET" if met else "UNMET", met


def scored_run(task_set: RubricTaskSet, clock: Clock, seed: int = 11) -> tuple[str, list[Envelope]]:
    rng = random.Random(seed)
    tasks = [task_set.tasks[i] for i in TASK_ROWS]
    run_id = "draco-scored-run"
    events: list[Envelope] = []
    emit = _emitter(run_id, clock, events)
    emit(
        RunStarted(
            benchmark="draco",
            spec={"name": "draco-fixture", "lanes": list(LANES), "judge": J1},
            spec_sha256="d" * 64,
            dataset=dataset_ref(task_set),
            systems=[SystemRef(name=lane, version="1") for lane in LANES],
            seed=seed,
        )
    )
    for payload in registration_payloads(task_set, tuple(tasks)):
        emit(payload)
    regimes = {
        J1: (3, "anthropic", "claude-test"),
        J2: (1, "google", "gemini-test"),
    }
    emit(
        JudgeRegimeRegistered(
            judge_id=J1,
            judge=SystemRef(
                name="claude-test",
                version="1",
                settings={"provider": "anthropic", "model": "claude-test", "temperature": 1.0},
            ),
            official=True,
            prompt_id="draco-criterion",
            prompt_sha256="b" * 64,
            samples=3,
            normalizer_version=NORMALIZER,
        )
    )
    reports: dict[
        tuple[str, int], tuple[int, str]
    ] = {}  # (lane, task index) -> (attempt, report id)
    for index, task in enumerate(tasks):
        for lane in LANES:
            provider = PROVIDERS[lane]
            attempts = 1
            if (lane, index) == FAILED_ITEM:
                for attempt, error in ((1, "timeout"), (2, "vendor_failed")):
                    emit(
                        ResearchFailed(
                            lane=lane,
                            provider=provider,
                            item_id=task.item_id,
                            attempt=attempt,
                            stage="poll",
                            error_class=error,
                            error_message=f"{error} on {task.item_id}",
                            wall_clock_ms=600_000.0,
                        )
                    )
                continue
            if (lane, index) == RETRIED_ITEM:
                emit(
                    ResearchFailed(
                        lane=lane,
                        provider=provider,
                        item_id=task.item_id,
                        attempt=1,
                        stage="submit",
                        error_class="http_status",
                        error_message="HTTP 503",
                    )
                )
                attempts = 2
            text = f"Report by {lane} on {task.item_id}: " + task.problem[:200]
            billed = lane == "exa_deep_reasoning"
            completed = emit(
                ResearchCompleted(
                    lane=lane,
                    provider=provider,
                    item_id=task.item_id,
                    attempt=attempts,
                    vendor_run_id=f"{lane}-{index}",
                    raw_output=text,
                    raw_citations=[{"url": f"https://example.test/{index}", "title": "Source"}],
                    instruction_sha256=INSTRUCTION_SHA,
                    submitted_at="2026-11-30T12:00:00.000000Z",
                    finished_at="2026-11-30T12:05:00.000000Z",
                    queue_ms=rng.uniform(0, 2000),
                    wall_clock_ms=round(rng.uniform(30_000, 900_000), 3),
                    poll_interval_s=5.0,
                    polls=rng.randrange(5, 100),
                    cost_usd=round(rng.uniform(0.01, 0.03), 4) if billed else None,
                    cost_basis="billed" if billed else None,
                    usage={"tokens": rng.randrange(1000, 9000)},
                )
            )
            if (lane, index) == UNREPORTED_ITEM:
                continue
            report = emit(
                ReportNormalized(
                    lane=lane,
                    item_id=task.item_id,
                    attempt=attempts,
                    normalizer_version=NORMALIZER,
                    source_event_id=completed.event_id,
                    raw_output_sha256=hashlib.sha256(text.encode()).hexdigest(),
                    stripped_bibliography=False,
                    bibliography=[
                        {"number": 1, "url": f"https://example.test/{index}", "title": "Source"}
                    ],
                    judged_text=text + f"\n\n[1] Source — https://example.test/{index}",
                )
            )
            reports[(lane, index)] = (attempts, report.event_id)

    def verdicts(judge_id: str, samples: int, skip=lambda lane, index, c, s: False):
        _samples, provider, model = regimes[judge_id]
        for (lane, index), (attempt, report_id) in sorted(reports.items()):
            task = tasks[index]
            for criterion in task.criteria:
                negative = criterion.weight < 0
                for sample in range(1, samples + 1):
                    if skip(lane, index, criterion, sample):
                        continue
                    outcome, verdict, met = _verdict_outcome(rng, negative, SKILL[lane])
                    judge_attempt = 1
                    if outcome == "failed" and rng.random() < 0.5:
                        # the failed sample, then its retry on resume as judge_attempt 2
                        emit(
                            _verdict(
                                lane,
                                task,
                                attempt,
                                judge_id,
                                criterion,
                                sample,
                                1,
                                "failed",
                                None,
                                negative,
                                report_id,
                                None,
                            )
                        )
                        judge_attempt = 2
                        outcome, verdict, met = _verdict_outcome(rng, negative, SKILL[lane])
                    llm = None
                    if outcome != "failed":
                        llm = LlmCallRecord(
                            provider=provider,
                            model=model,
                            temperature=1.0,
                            prompt_id="draco-criterion",
                            prompt_sha256="b" * 64,
                            raw_completion=verdict or "I cannot decide",
                            input_tokens=1200,
                            output_tokens=30,
                        )
                    emit(
                        _verdict(
                            lane,
                            task,
                            attempt,
                            judge_id,
                            criterion,
                            sample,
                            judge_attempt,
                            outcome,
                            verdict,
                            met,
                            report_id,
                            llm,
                        )
                    )

    def j1_skip(lane, index, criterion, sample):
        # the incomplete item: the last 5 criteria miss their third sample, 2 miss all
        if (lane, index) != INCOMPLETE_ITEM:
            return False
        position = criterion.position
        count = len(tasks[index].criteria)
        return (position >= count - 5 and sample == 3) or position < 2

    verdicts(J1, 3, j1_skip)
    # the rejudge: a new judge regime under the same run_id
    emit(
        JudgeRegimeRegistered(
            judge_id=J2,
            judge=SystemRef(
                name="gemini-test",
                version="1",
                settings={"provider": "google", "model": "gemini-test", "temperature": 0.0},
            ),
            official=False,
            prompt_id="draco-criterion",
            prompt_sha256="c" * 64,
            samples=1,
            normalizer_version=NORMALIZER,
            argv=["bench", "rejudge"],
        )
    )
    verdicts(J2, 1, lambda lane, index, c, s: (lane, index) == J2_UNJUDGED_ITEM)
    return run_id, events


def _verdict(
    lane,
    task,
    attempt,
    judge_id,
    criterion,
    sample,
    judge_attempt,
    outcome,
    verdict,
    met,
    report_id,
    llm,
) -> JudgeVerdict:
    return JudgeVerdict(
        lane=lane,
        item_id=task.item_id,
        attempt=attempt,
        judge_id=judge_id,
        criterion_id=criterion.criterion_id,
        sample=sample,
        judge_attempt=judge_attempt,
        polarity="negative" if criterion.weight < 0 else "positive",
        outcome=outcome,
        verdict=verdict,
        met=met,
        justification=None if outcome != "parsed" else "because",
        reasks=1 if outcome == "unparsed" else 0,
        error_class="timeout" if outcome == "failed" else None,
        error_message="judge timed out" if outcome == "failed" else None,
        source_event_id=report_id,
        llm=llm,
    )


def build_fixture() -> Fixture:
    task_set = draco_tasks()
    clock = Clock()
    registration_id, registration_events = registration_run(task_set, clock)
    scored_id, scored_events = scored_run(task_set, clock)
    return Fixture(
        task_set=task_set,
        tasks=tuple(task_set.tasks[i] for i in TASK_ROWS),
        scored_run_id=scored_id,
        registration_run_id=registration_id,
        events=[*registration_events, *scored_events],
    )


def ingest(events: list[Envelope], home: Path) -> Path:
    """Append `events` to a fresh log under `home` and load it with the real dlt ingest."""
    from ingest.pipeline import ingest_log
    from warehouse.log import EventLog

    log = EventLog(home / "log")
    with log.writer() as writer:
        writer.append(events)
    db_path = home / "warehouse.duckdb"
    result = ingest_log(log, db_path, home / "dlt")
    if result.quarantined:
        raise AssertionError(f"ingest quarantined events: {result.quarantine_samples}")
    return db_path
