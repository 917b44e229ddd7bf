"""The shapes the DRACO collectors share: tasks, criteria, and the two roles a run plugs in.

A `ResearchLane` turns a task into a raw report (appending every HTTP exchange it makes as a
`provider_call_*` event through `emit`); a `Judge` turns (task, criterion, judged text) into
one verdict sample. Both are explicit registries elsewhere; nothing registers itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from warehouse.events import (
    LlmCallRecord,
    Payload,
    ResearchCompleted,
    ResearchFailed,
    SystemRef,
)

Polarity = Literal["positive", "negative"]

# Appends one payload as an event of the current run (fsync'd) and returns its event id.
Emit = Callable[[Payload], Awaitable[str]]


@dataclass(frozen=True)
class Criterion:
    criterion_id: str
    axis: str  # rubric section id, e.g. "factual-accuracy"
    axis_title: str
    position: int  # order in the task's flat list of criteria
    weight: int
    requirement: str

    @property
    def polarity(self) -> Polarity:
        return "negative" if self.weight < 0 else "positive"

    @property
    def least_favourable_met(self) -> bool:
        """The verdict that can only lower the system's score: UNMET for a positive criterion,
        MET (the penalty applies) for a negative one."""
        return self.polarity == "negative"


@dataclass(frozen=True)
class RubricTask:
    item_id: str  # upstream UUID for DRACO
    position: int  # 0-based row in the file
    domain: str
    problem: str
    rubric_id: str
    criteria: tuple[Criterion, ...]

    @property
    def positive_weight(self) -> int:
        return sum(c.weight for c in self.criteria if c.weight > 0)


@dataclass(frozen=True)
class RubricTaskSet:
    """A pinned, verified task file: DRACO's test split or a user's own rubric tasks."""

    name: str  # "draco" or the user's set name
    uri: str  # where the bytes came from (path or hf://...)
    sha256: str
    revision: str | None
    tasks: tuple[RubricTask, ...]

    @property
    def criteria_count(self) -> int:
        return sum(len(t.criteria) for t in self.tasks)


@runtime_checkable
class ResearchLane(Protocol):
    lane: str  # e.g. "exa_agent_high"
    provider: str  # e.g. "exa"

    def system_ref(self) -> SystemRef: ...

    async def research(
        self, task: RubricTask, instruction: str, *, attempt: int, emit: Emit
    ) -> ResearchCompleted | ResearchFailed:
        """Run one task to a terminal payload (not yet appended: the runner appends it).
        Every HTTP exchange on the way is appended through `emit` first, so the raw record
        survives a crash. Raises `collectors.http.LaneAborted` on 401/402/403."""
        ...


@dataclass(frozen=True)
class JudgeSample:
    outcome: Literal["parsed", "unparsed", "failed"]
    verdict: Literal["MET", "UNMET"] | None
    met: bool  # the scoring verdict (least favourable when not parsed)
    justification: str | None
    reasks: int
    llm: LlmCallRecord | None
    error_class: str | None = None
    error_message: str | None = None
    # Every completion this sample got, in order: the first answer, then the re-ask's (if
    # any). `llm` is the last of them; the earlier, unparsable one is kept here for audit.
    calls: tuple[LlmCallRecord, ...] = ()


@runtime_checkable
class Judge(Protocol):
    judge_id: str  # names the regime: model, provider, prompt sha, samples, sampling params
    official: bool  # False for the offline judge
    prompt_id: str
    prompt_sha256: str
    samples: int

    def system_ref(self) -> SystemRef: ...

    def judge(
        self, task: RubricTask, criterion: Criterion, judged_text: str, *, sample: int
    ) -> JudgeSample:
        """One independent sample (no shared context with other samples). Never raises for a
        provider failure: returns outcome="failed" with the least favourable `met`. Raises
        `collectors.llm.LlmConfigError` or an auth `LlmCallError` only when the whole run must
        stop."""
        ...
