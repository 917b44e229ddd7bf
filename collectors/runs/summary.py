"""The counters every run summary shares, and the status wording, in one place."""

from __future__ import annotations

from dataclasses import dataclass, field

from collectors.runs.kernel import KernelResult


@dataclass(kw_only=True)
class RunSummary:
    run_id: str
    spec_sha256: str | None = None
    planned: int  # units in the spec
    skipped_existing: int = 0  # units complete before this invocation
    completed: int = 0  # units completed by this invocation
    failed: int = 0  # units that ended in a failure in this invocation
    already_finished: bool = False  # nothing to do: the run had finished before
    duration_s: float = 0.0
    events_appended: int = 0  # new lines written (a repeated fact is a no-op, not counted)
    aborted_lanes: dict[str, str] = field(default_factory=dict)
    stop_reason: str | None = None  # a run-wide stop (auth abort, cost cap)
    systems_word: str = field(default="lane", repr=False)  # how this family names them

    def absorb(self, result: KernelResult) -> None:
        """Take the kernel's view of the invocation."""
        self.already_finished = result.already_finished
        self.duration_s = result.duration_s
        self.events_appended = result.events_appended
        self.stop_reason = result.stop_reason

    def incomplete(self) -> str | None:
        """Why a re-run would still do work, beyond aborted lanes (a family may add reasons)."""
        return None

    def has_failures(self) -> bool:
        return self.failed > 0

    def failures(self) -> str:
        return f"{self.failed} failures"

    @property
    def status(self) -> str:
        if self.already_finished:
            return "already finished"
        if self.aborted_lanes:
            return f"incomplete: {len(self.aborted_lanes)} {self.systems_word}(s) aborted"
        if self.stop_reason is not None:
            return f"incomplete: {self.stop_reason}"
        reason = self.incomplete()
        if reason is not None:
            return f"incomplete: {reason}"
        return f"finished with {self.failures()}" if self.has_failures() else "finished"
