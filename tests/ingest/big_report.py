"""A DRACO run whose research system returned one huge report, written as the runner writes it.

The judge's recorded request carries the whole judged text, so every `judge_verdict` of the
report (criteria × samples) holds its own copy: the shape of the log that blocked ingest in
issue #25 (an 11 MB report, 40 criteria × 3 samples). Real event models, the real log writer.
Shared by tests/ingest and `benchmarks/ingest.py --big-report`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.log_files import item_events
from warehouse.canonical import sha256_hex
from warehouse.events import (
    JudgeVerdict,
    LlmCallRecord,
    RecordedRequest,
    ReportNormalized,
    ResearchCompleted,
    make_event,
)
from warehouse.log import EventLog
from warehouse.provenance import producer_for

BIG_RUN = "run-big-report"
OTHER_RUN = "run-beside"
PRODUCER = producer_for({"test": "big-report"})
JUDGE_ID = "anthropic:claude-judge|n=3"


def report_text(size: int) -> str:
    """`size` bytes of ASCII prose that does not repeat (a real report does not compress to
    nothing either)."""
    parts: list[str] = []
    total, n = 0, 0
    while total < size:
        digest = hashlib.sha256(str(n).encode()).hexdigest()
        sentence = f"Finding {n}: the measured value {digest[:12]} is reported by source {n % 97}. "
        parts.append(sentence)
        total += len(sentence)
        n += 1
    return "".join(parts)[:size]


def write_big_report_run(
    log: EventLog, *, report_bytes: int, criteria: int = 40, samples: int = 3
) -> int:
    """One task, one lane, one report of `report_bytes`, judged `criteria` × `samples` times;
    returns how many events were written."""
    report = report_text(report_bytes)
    research = make_event(
        ResearchCompleted(
            lane="big-research",
            provider="vendor",
            item_id="task-1",
            attempt=1,
            raw_output=report,
            instruction_sha256="0" * 64,
            submitted_at="2026-12-01T00:00:00Z",
            finished_at="2026-12-01T00:10:00Z",
            wall_clock_ms=600_000.0,
        ),
        run_id=BIG_RUN,
        producer=PRODUCER,
    )
    normalized = make_event(
        ReportNormalized(
            lane="big-research",
            item_id="task-1",
            attempt=1,
            normalizer_version="1",
            source_event_id=research.event_id,
            raw_output_sha256=sha256_hex(report),
            stripped_bibliography=False,
            judged_text=report,
        ),
        run_id=BIG_RUN,
        producer=PRODUCER,
    )
    written = 2
    with log.writer() as writer:
        writer.append([research, normalized])
        for criterion in range(1, criteria + 1):
            prompt = f"Criterion {criterion}: does the response state X?\n\nResponse:\n{report}"
            for sample in range(1, samples + 1):
                completion = '{"verdict": "MET", "justification": "it does"}'
                llm = LlmCallRecord(
                    provider="anthropic",
                    model="claude-judge",
                    temperature=1.0,
                    max_tokens=512,
                    prompt_id="draco-judge@1",
                    prompt_sha256="1" * 64,
                    raw_completion=completion,
                    request=RecordedRequest(
                        method="POST",
                        url="https://api.anthropic.com/v1/messages",
                        headers={"x-api-key": "[redacted]"},
                        body={
                            "model": "claude-judge",
                            "max_tokens": 512,
                            "messages": [{"role": "user", "content": prompt}],
                        },
                    ),
                    raw_body='{"content": [{"type": "text", "text": "MET"}]}',
                )
                verdict = JudgeVerdict(
                    lane="big-research",
                    item_id="task-1",
                    attempt=1,
                    judge_id=JUDGE_ID,
                    criterion_id=f"c{criterion}",
                    sample=sample,
                    polarity="positive",
                    outcome="parsed",
                    verdict="MET",
                    met=True,
                    justification="it does",
                    source_event_id=normalized.event_id,
                    llm=llm,
                )
                # One event per append: the writer holds what it is given, and 120 copies of
                # the report at once is the memory this test is not about.
                writer.append([make_event(verdict, run_id=BIG_RUN, producer=PRODUCER)])
                written += 1
    return written


def write_other_run(log: EventLog, count: int = 200) -> int:
    with log.writer() as writer:
        writer.append(
            item_events(OTHER_RUN, 0, count, tool="big-report", text=lambda i: f"body {i}")
        )
    return count


def write_scenario(log_dir: Path, *, report_bytes: int, criteria: int = 40, samples: int = 3):
    """Another run, the big report's run, then another run again: every other event is on both
    sides of the oversized ones. Returns how many events the log holds."""
    log = EventLog(log_dir)
    total = write_other_run(log, 100)
    total += write_big_report_run(
        log, report_bytes=report_bytes, criteria=criteria, samples=samples
    )
    late = item_events(
        OTHER_RUN, 0, 100, tool="big-report", text=lambda i: f"late {i}", item_prefix="late"
    )
    with log.writer() as writer:
        writer.append(late)
    return total + 100
