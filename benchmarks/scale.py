"""The warehouse at real size: ingest, build, incremental build, rescore and a bare-query reference.

    python benchmarks/scale.py --verdicts 10000 [--verdicts 100000 ...] [--inline-bodies]
                               [--keep DIR] [--demo] [--lake]

For each N it writes a DRACO-shaped log through the project's own event models and LogWriter
(real DRACO tasks and criteria, 9 systems x tasks x criteria x 3 samples per run, as many runs as
N needs), as heavy as a real run: 8-20 kB reports (seeded) normalised by the real normaliser,
each with the research provider calls behind it (the submit, and the vendor's raw response
holding the report), and judge LLM call records as the real judge writes them (`JudgeCalls`:
the request references the report stored once in report_normalized, warehouse/bodies.py;
checked against the real LlmJudge over the Anthropic SDK before anything is written). With
`--inline-bodies` each N is also measured in the shape before references (every verdict's
request holds the whole report). The demo's extraction run and QA run go beside it (the real
offline runners). Then it times, each `bench` command in its own process under /usr/bin/time
(peak RSS = max over the process and its children, i.e. dbt):

  ingest, full build, publish, +1,000 events (a rejudge) ingest, build and publish, rescore with
  a DRACO penalty floor, rescore with extraction weights, and the reference: one bare DuckDB
  query computing the same per-item clamped DRACO score and per-system mean from typed verdict
  rows; and the bytes on disk per part (log, warehouse.duckdb, the serving snapshot, dlt's
  directory) after the full build and after the +1,000 build, with the warehouse's free blocks
  and what an explicit CHECKPOINT does to them.

With `--lake`, the same log is also loaded, built and rescored on a DuckLake (issue #29): a
PostgreSQL catalog (the Debian server, started in a temporary folder) and S3 data (moto's server),
both on loopback, as tests/lake/test_lake_team.py runs them; printed beside the local figures with
a reader's query latency on each and the lake's bytes.

Targets (issue #8) at 1M: build <= 90 s, build after +1,000 events <= 15 s, rescore <= 10x the
bare query, peak RSS <= 4 GB.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BENCH = Path(sys.executable).with_name("bench")
DRACO_JSONL = REPO.parent / "shared" / "data" / "draco" / "test.jsonl"
# Nine research systems of the registry (seeds/research_prices.csv), weakest first.
SYSTEMS = (
    "parallel_task_lite",
    "parallel_task_core",
    "exa_deep_reasoning",
    "nimble_agent_high",
    "tavily_research_pro",
    "youcom_research_exhaustive",
    "parallel_task_ultra8x",
    "nimble_agent_xhigh",
    "valyu_heavy",
)
SAMPLES = 3
JUDGE = "draco-judge@scale:claude-scale"
REJUDGE = "draco-judge@scale:gemini-scale"
APPENDED = 1000
WEIGHTS = "completeness=0.5,success=0.2,f1=0.2,latency=0.05,throughput=0.05"


# --- generation ------------------------------------------------------------------------------

REPORT_CHARS = (8_000, 20_000)  # a DRACO report as research systems write them (seeded size)
FAKE_KEY = "sk-ant-scale-bench-0000"  # planted so the backend starts; redacted from every record
JUDGE_MODEL = "claude-scale"
_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "is",
    "that",
    "for",
    "on",
    "with",
    "as",
    "by",
    "from",
    "at",
    "this",
    "which",
    "are",
    "be",
    "or",
    "was",
    "an",
    "it",
    "not",
    "treatment",
    "effect",
    "estimator",
    "trends",
    "parallel",
    "assumption",
    "cohort",
    "adoption",
    "staggered",
    "analysis",
    "study",
    "sample",
    "data",
    "evidence",
    "report",
    "source",
    "survey",
    "results",
    "model",
    "policy",
    "market",
    "health",
    "labour",
    "income",
    "rates",
    "growth",
    "risk",
    "share",
    "average",
    "variance",
    "bias",
    "robust",
    "panel",
    "period",
    "outcome",
    "measured",
    "significant",
    "estimate",
    "regression",
    "control",
    "group",
    "county",
    "state",
    "federal",
    "program",
    "increase",
    "decline",
    "percent",
    "between",
    "during",
    "after",
    "before",
    "across",
    "compared",
    "relative",
    "higher",
    "lower",
    "first",
    "second",
]


def report_text(rng: random.Random, lane: str, task) -> tuple[str, list]:
    """A research report of 8-20 kB (seeded): a summary, sections citing [n], and its own
    Sources list, the shape the normaliser strips and re-renders."""
    from warehouse.events import ReportCitation

    size = rng.randrange(*REPORT_CHARS)
    n_sources = rng.randrange(5, 25)
    citations = [
        ReportCitation(
            url=f"https://source{rng.randrange(10**6)}.example.org/{task.item_id}/{n}",
            title=f"Source {n}: " + " ".join(rng.choices(_WORDS, k=6)),
        )
        for n in range(1, n_sources + 1)
    ]
    parts = [f"# Report by {lane}\n\n## Summary\n\n"]
    total = len(parts[0])
    section = 0
    while total < size:
        if rng.random() < 0.08:
            section += 1
            piece = f"\n\n## Section {section}: {' '.join(rng.choices(_WORDS, k=4))}\n\n"
        else:
            words = rng.choices(_WORDS, k=rng.randrange(12, 30))
            piece = (
                " ".join(words).capitalize()
                + f" ({rng.randrange(1, 99)}.{rng.randrange(10)}%) [{rng.randrange(1, n_sources + 1)}]. "
            )
        parts.append(piece)
        total += len(piece)
    sources = "\n".join(f"[{n}] {c.title} \u2014 {c.url}" for n, c in enumerate(citations, 1))
    return "".join(parts) + "\n\n## Sources\n\n" + sources + "\n", citations


class JudgeCalls:
    """Judge LLM call records as the real judge writes them: `LlmJudge` over `AnthropicBackend`,
    whose SDK is answered in process (httpx2.MockTransport, no network).

    A million SDK calls take ~1.5 ms each here, so the records are made the way the backend
    makes them (the judge's own `render`, the body the SDK sends, `warehouse.bodies` references)
    and `check()` holds them equal to what the real judge path records for the same answers
    before any is written. `inline=True`: each request holds the whole report, as before
    references (the body parsed, no body_sha256 / body_refs)."""

    def __init__(self, *, inline: bool, model: str = JUDGE_MODEL):
        import httpx2

        from collectors.draco.judge import LlmJudge
        from collectors.llm.anthropic_backend import AnthropicBackend

        os.environ.setdefault("ANTHROPIC_API_KEY", FAKE_KEY)
        self.inline = inline
        self.model = model
        self._answers: list[tuple[str, str, int, int]] = []
        self.backend = AnthropicBackend(
            max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(self._answer))
        )
        self.judge = LlmJudge(
            self.backend, model=model, temperature=1.0, max_tokens=1024, samples=SAMPLES
        )
        self._headers: dict[str, str] | None = None

    # The vendor's side: an Anthropic Messages response (docs.anthropic.com/en/api/messages).
    def response_body(self, completion: str, request_id: str, tokens: tuple[int, int]) -> str:
        return json.dumps(
            {
                "id": f"msg_{request_id}",
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [{"type": "text", "text": completion}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]},
            }
        )

    def _answer(self, request):
        import httpx2

        completion, request_id, tokens_in, tokens_out = self._answers.pop(0)
        body = self.response_body(completion, request_id, (tokens_in, tokens_out))
        return httpx2.Response(
            200,
            content=body.encode(),
            headers={"content-type": "application/json", "request-id": f"req_{request_id}"},
        )

    def _sent(self, messages: list[dict[str, str]]) -> bytes:
        body = {
            "max_tokens": self.judge.max_tokens,
            "messages": messages,
            "model": self.model,
            "temperature": self.judge.temperature,
        }
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()

    def request(self, messages: list[dict[str, str]], report: str):
        """The RecordedRequest the backend records for these messages (headers: the real
        path's, once `check()` ran)."""
        from warehouse.bodies import reference_texts
        from warehouse.canonical import sha256_hex
        from warehouse.events import RecordedRequest

        sent = self._sent(messages)
        headers = {**(self._headers or {}), "content-length": str(len(sent))}
        url = f"{self.backend.base_url}/v1/messages"
        text = sent.decode()
        referenced = None if self.inline else reference_texts(text, (report,))
        if referenced is None:
            return RecordedRequest(method="POST", url=url, headers=headers, body=json.loads(text))
        stored, refs = referenced
        return RecordedRequest(
            method="POST",
            url=url,
            headers=headers,
            body=stored,
            body_sha256=sha256_hex(sent),
            body_refs=refs,
        )

    def record(self, request, completion: str, request_id: str, tokens: tuple[int, int], latency):
        from warehouse.events import LlmCallRecord

        return LlmCallRecord(
            provider="anthropic",
            model=self.model,
            base_url=self.backend.base_url,
            temperature=self.judge.temperature,
            max_tokens=self.judge.max_tokens,
            prompt_id=self.judge.prompt_id,
            prompt_sha256=self.judge.prompt_sha256,
            raw_completion=completion,
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            vendor_request_id=f"req_{request_id}",
            latency_ms=latency,
            request=request,
            raw_body=self.response_body(completion, request_id, tokens),
        )

    def first_messages(self, task, criterion, report: str) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.judge.render(task, criterion, report)}]

    def reask_messages(self, first: list[dict[str, str]], completion: str):
        return [
            *first,
            {"role": "assistant", "content": completion},
            {"role": "user", "content": self.judge.prompt.section("reask")},
        ]

    def check(self, task, report: str) -> None:
        """Run the real judge on a few criteria of `task` (a parsed sample and an unparsed one
        with its re-ask) and refuse to generate when a made record differs from the real one
        in anything but the measured latency."""
        from collectors.draco.judge import parse_verdict

        answers = [
            ('{"verdict": "MET", "justification": "The report states it."}', "check-1", (4100, 31)),
            ("I cannot decide", "check-2", (4200, 5)),
            ("Still undecided", "check-3", (4300, 4)),
        ]
        self._answers = [(c, r, *t) for c, r, t in answers]
        parsed = self.judge.judge(task, task.criteria[0], report, sample=1)
        unparsed = self.judge.judge(task, task.criteria[1], report, sample=1)
        assert parsed.outcome == "parsed" and unparsed.outcome == "unparsed"
        assert parse_verdict(answers[1][0]) is None
        self._headers = dict(parsed.llm.request.headers)
        first = self.first_messages(task, task.criteria[1], report)
        made = [
            self.record(
                self.request(self.first_messages(task, task.criteria[0], report), report),
                *answers[0],
                parsed.llm.latency_ms,
            ),
            self.record(self.request(first, report), *answers[1], unparsed.calls[0].latency_ms),
            self.record(
                self.request(self.reask_messages(first, answers[1][0]), report),
                *answers[2],
                unparsed.calls[1].latency_ms,
            ),
        ]
        real = [parsed.llm, *unparsed.calls]
        for mine, theirs in zip(made, real, strict=True):
            theirs_json = theirs.model_dump(mode="json")
            if self.inline:  # the real path references the report; inline is its expansion
                from warehouse.bodies import expand_body

                request = theirs_json["request"]
                theirs_json["request"] = {
                    **{k: request[k] for k in ("method", "url", "headers")},
                    "body": json.loads(expand_body(request, [report])),
                }
            if mine.model_dump(mode="json") != theirs_json:
                raise SystemExit(
                    "benchmarks/scale.py: the judge records it makes differ from the real "
                    f"judge's:\nmade {mine.model_dump(mode='json')}\nreal {theirs_json}"
                )


def _verdict_payloads(
    calls: JudgeCalls, lane, task, report_id, report, judge_id, samples, rng, skill
):
    """Every criterion x sample verdict of one report, with the judge's LLM call records: one
    request per criterion (the samples send the same prompt), a re-ask for an unparsed sample."""
    from warehouse.events import JudgeVerdict

    for criterion in task.criteria:
        negative = criterion.weight < 0
        first = calls.first_messages(task, criterion, report)
        request = calls.request(first, report)
        for sample in range(1, samples + 1):
            roll = rng.random()
            request_id = f"{report_id[:8]}-{criterion.criterion_id}-{judge_id[-6:]}-{sample}"
            tokens = (len(first[0]["content"]) // 4 + rng.randrange(50), 30 + rng.randrange(60))
            llm, earlier, justification = None, [], None
            if roll < 0.03:
                outcome, verdict, met = "failed", None, negative
            elif roll < 0.06:
                outcome, verdict, met = "unparsed", None, negative
                undecided = "I cannot decide without reading the sources."
                earlier = [
                    calls.record(request, undecided, request_id, tokens, rng.uniform(400, 4000))
                ]
                llm = calls.record(
                    calls.request(calls.reask_messages(first, undecided), report),
                    "Still undecided.",
                    request_id + "-reask",
                    (tokens[0] + 40, 5),
                    round(rng.uniform(400, 4000), 3),
                )
            else:
                met = rng.random() < (0.2 * (1.2 - skill) if negative else skill)
                outcome, verdict = "parsed", ("MET" if met else "UNMET")
                justification = (
                    f"The report {'states' if met else 'does not state'} "
                    + " ".join(rng.choices(_WORDS, k=rng.randrange(10, 30)))
                    + "."
                )
                completion = json.dumps({"verdict": verdict, "justification": justification})
                llm = calls.record(
                    request, completion, request_id, tokens, round(rng.uniform(400, 4000), 3)
                )
            yield JudgeVerdict(
                lane=lane,
                item_id=task.item_id,
                attempt=1,
                judge_id=judge_id,
                criterion_id=criterion.criterion_id,
                sample=sample,
                judge_attempt=1,
                polarity="negative" if negative else "positive",
                outcome=outcome,
                verdict=verdict,
                met=met,
                justification=justification,
                reasks=1 if outcome == "unparsed" else 0,
                error_class="timeout" if outcome == "failed" else None,
                error_message="judge timed out" if outcome == "failed" else None,
                source_event_id=report_id,
                llm=llm,
                earlier_calls=earlier,
            )


def _regime(judge_id: str, model: str, samples: int, official: bool):
    from collectors.draco.normalize import NORMALIZER_VERSION
    from warehouse.events import JudgeRegimeRegistered, SystemRef

    return JudgeRegimeRegistered(
        judge_id=judge_id,
        judge=SystemRef(
            name=model, version="1", settings={"provider": "anthropic", "model": model}
        ),
        official=official,
        prompt_id="draco-criterion",
        prompt_sha256="b" * 64,
        samples=samples,
        normalizer_version=NORMALIZER_VERSION,
    )


def _research_calls(rng, lane, task, run_id, index, raw_output, citations, instruction):
    """The provider calls behind one report, as a research lane records them: the submit (the
    instruction and problem sent) and the result (the vendor's raw JSON, the report inside)."""
    from warehouse.events import CallTimings, ProviderCallCompleted, RecordedRequest

    provider = lane.split("_")[0]
    base = f"https://api.{provider}.example/v1/research"
    vendor_run = f"{run_id}-{lane}-{index}"
    headers = {
        "accept": "application/json",
        "accept-encoding": "gzip, deflate, br",
        "connection": "keep-alive",
        "content-type": "application/json",
        "host": f"api.{provider}.example",
        "user-agent": "python-httpx/0.28.1",
        "authorization": "[REDACTED]",
    }
    query = instruction.render(problem=task.problem)

    def timings():
        round_trip = rng.uniform(80, 900)
        return CallTimings(
            queue_wait_ms=rng.uniform(0, 5), round_trip_ms=round_trip, whole_call_ms=round_trip + 2
        )

    submit_body = {"query": query, "effort": "high"}
    submit = ProviderCallCompleted(
        lane=lane,
        provider=provider,
        stage="research:submit",
        item_id=task.item_id,
        attempt=1,
        request=RecordedRequest(
            method="POST",
            url=base,
            headers={**headers, "content-length": str(len(json.dumps(submit_body)))},
            body=submit_body,
        ),
        status_code=200,
        response_headers={"content-type": "application/json", "x-request-id": vendor_run},
        raw_body=json.dumps({"id": vendor_run, "status": "queued"}),
        vendor_request_id=vendor_run,
        timings=timings(),
        http_attempts=1,
        concurrency=8,
        rate_per_s=2.0,
    )
    raw = json.dumps(
        {
            "id": vendor_run,
            "status": "completed",
            "output": {
                "text": raw_output,
                "citations": [c.model_dump(mode="json") for c in citations],
            },
            "usage": {
                "input_tokens": rng.randrange(1000, 9000),
                "output_tokens": len(raw_output) // 4,
            },
        }
    )
    result = ProviderCallCompleted(
        lane=lane,
        provider=provider,
        stage="research:result",
        item_id=task.item_id,
        attempt=1,
        request=RecordedRequest(method="GET", url=f"{base}/{vendor_run}", headers=headers),
        status_code=200,
        response_headers={
            "content-type": "application/json",
            "content-length": str(len(raw.encode())),
            "x-request-id": f"{vendor_run}-result",
        },
        raw_body=raw,
        vendor_request_id=f"{vendor_run}-result",
        timings=timings(),
        http_attempts=1,
        concurrency=8,
        rate_per_s=2.0,
    )
    return submit, result


GENERATORS = 2  # processes writing runs side by side (one writer per run, as the log allows)


def generate_draco(
    home: Path,
    n_verdicts: int,
    *,
    inline: bool = False,
    part: int = 0,
    parts: int = 1,
    stage: int = 0,
    stages: int = 1,
) -> dict:
    """DRACO runs through LogWriter until about `n_verdicts` judge_verdict events are written;
    this process writes the runs `run_index % parts == part`, each from its own seed, of stage
    `stage` of `stages` (the runs in order, cut in `stages` equal spans)."""
    from collectors.draco.dataset import dataset_ref, load_draco, registration_payloads
    from collectors.draco.normalize import NORMALIZER
    from collectors.draco.prompts import RESEARCH_INSTRUCTION_ID, load_prompt
    from warehouse.events import ResearchCompleted, RunFinished, RunStarted, SystemRef, make_event
    from warehouse.log import EventLog
    from warehouse.provenance import producer_for

    task_set = load_draco(DRACO_JSONL)
    instruction = load_prompt(RESEARCH_INSTRUCTION_ID)
    per_task = [len(t.criteria) * len(SYSTEMS) * SAMPLES for t in task_set.tasks]
    per_run = sum(per_task)
    runs = max(1, math.ceil(n_verdicts / per_run))
    producer = producer_for({"benchmark": "scale"})
    log = EventLog(home / "log")
    written = 0
    calls = JudgeCalls(inline=inline)
    checked = False
    started = time.perf_counter()
    mine = [i for i in range(part, runs, parts) if i * stages // runs == stage]
    with log.writer() as writer:
        for run_index in mine:
            rng = random.Random(run_index)
            budget = n_verdicts - run_index * per_run  # every run before the last is whole
            tasks = []
            for task, cost in zip(task_set.tasks, per_task, strict=True):
                if budget <= 0:
                    break
                tasks.append(task)
                budget -= cost
            run_id = f"scale-draco-run-{run_index:02d}"
            batch = []

            def emit(payload, run_id=run_id, batch=batch):
                event = make_event(payload, run_id=run_id, producer=producer)
                batch.append(event)
                if len(batch) >= 2000:  # inline-shape verdicts are ~20 kB each
                    writer.append(batch)
                    batch.clear()
                return event

            emit(
                RunStarted(
                    benchmark="draco",
                    spec={"name": f"scale-{run_index}", "lanes": list(SYSTEMS), "judge": JUDGE},
                    spec_sha256=hashlib.sha256(run_id.encode()).hexdigest(),
                    dataset=dataset_ref(task_set),
                    systems=[SystemRef(name=lane, version="1") for lane in SYSTEMS],
                    seed=run_index,
                )
            )
            for payload in registration_payloads(task_set, tuple(tasks)):
                emit(payload)
            emit(_regime(JUDGE, JUDGE_MODEL, SAMPLES, True))
            for index, task in enumerate(tasks):
                for skill_rank, lane in enumerate(SYSTEMS):
                    raw_output, citations = report_text(rng, lane, task)
                    submit, result = _research_calls(
                        rng, lane, task, run_id, index, raw_output, citations, instruction
                    )
                    sources = [emit(submit).event_id, emit(result).event_id]
                    completed = emit(
                        ResearchCompleted(
                            lane=lane,
                            provider=lane.split("_")[0],
                            item_id=task.item_id,
                            attempt=1,
                            vendor_run_id=f"{run_id}-{lane}-{index}",
                            raw_output=raw_output,
                            raw_citations=citations,
                            instruction_sha256=instruction.sha256,
                            submitted_at="2026-11-30T12:00:00.000000Z",
                            finished_at="2026-11-30T12:05:00.000000Z",
                            queue_ms=rng.uniform(0, 2000),
                            wall_clock_ms=round(rng.uniform(30_000, 900_000), 3),
                            poll_interval_s=5.0,
                            polls=rng.randrange(5, 100),
                            usage={"tokens": rng.randrange(1000, 9000)},
                            source_event_ids=sources,
                        )
                    )
                    normalized = NORMALIZER(
                        lane, task.item_id, 1, completed.event_id, raw_output, citations
                    )
                    report = emit(normalized)
                    if not checked:
                        calls.check(task, normalized.judged_text)
                        checked = True
                    skill = 0.35 + 0.05 * skill_rank
                    for verdict in _verdict_payloads(
                        calls,
                        lane,
                        task,
                        report.event_id,
                        normalized.judged_text,
                        JUDGE,
                        SAMPLES,
                        rng,
                        skill,
                    ):
                        emit(verdict)
                        written += 1
            emit(
                RunFinished(
                    terminal_events=len(tasks) * len(SYSTEMS),
                    completed=len(tasks) * len(SYSTEMS),
                    failed=0,
                    duration_s=1.0,
                )
            )
            writer.append(batch)
    return {
        "runs": len(mine),
        "verdicts": written,
        "events": sum(1 for _ in log.read()) if parts == stages == 1 else None,
        "generate_s": time.perf_counter() - started,
    }


def append_rejudge(home: Path, n_events: int = APPENDED, *, inline: bool = False) -> int:
    """`n_events` new verdicts on the first run: a second judge regime reaching a few reports."""
    from collectors.draco.dataset import load_draco
    from warehouse.events import make_event
    from warehouse.lake import open_warehouse
    from warehouse.log import EventLog
    from warehouse.provenance import producer_for

    task_set = load_draco(DRACO_JSONL)
    producer = producer_for({"benchmark": "scale"})
    run_id = "scale-draco-run-00"
    with open_warehouse(home / "warehouse.duckdb", read_only=True) as con:  # or the lake
        reports = {
            key: (event_id, text)
            for key, event_id, text in con.execute(
                "select payload->>'lane' || '/' || (payload->>'item_id'), event_id, "
                "payload->>'judged_text' from raw.events "
                "where event_type = 'report_normalized' and run_id = ?",
                [run_id],
            ).fetchall()
        }
    events = [
        make_event(_regime(REJUDGE, "gemini-scale", 1, False), run_id=run_id, producer=producer)
    ]
    rng = random.Random(1)
    by_id = {t.item_id: t for t in task_set.tasks}
    calls = JudgeCalls(inline=inline, model="gemini-scale")
    for key in sorted(reports):
        lane, item_id = key.split("/", 1)
        report_id, text = reports[key]
        if calls._headers is None:
            calls.check(by_id[item_id], text)
        for verdict in _verdict_payloads(
            calls, lane, by_id[item_id], report_id, text, REJUDGE, 1, rng, 0.5
        ):
            if len(events) >= n_events:
                break
            events.append(make_event(verdict, run_id=run_id, producer=producer))
        if len(events) >= n_events:
            break
    with EventLog(home / "log").writer() as writer:
        writer.append(events)
    return len(events)


def generate_beside(home: Path) -> None:
    """The demo's extraction run (every local engine) and QA run, through the real runners."""
    from bench import qa_cli
    from bench.corpora import resolve_corpus
    from collectors.extraction.engines import ENGINES
    from collectors.extraction.runner import run_extraction
    from warehouse.log import EventLog
    from warehouse.paths import BenchPaths

    paths = BenchPaths.from_env(home).ensure()
    corpus = resolve_corpus("demo", paths)
    run_extraction(EventLog(paths.log_dir), corpus, sorted(ENGINES), argv=["scale"])
    qa_cli.run_demo(paths)


# --- measuring -------------------------------------------------------------------------------


@contextmanager
def environment(values: dict[str, str]):
    """This process's environment with `values` set, restored after (the commands it times
    inherit it)."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def timed(home: Path, *args: str) -> tuple[float, float, float]:
    """(wall seconds, peak RSS MB of the process and its descendants, their CPU seconds) of one
    command. CPU seconds move less than wall time when other work shares the cores."""
    out = home / "time.out"
    env = {**os.environ, "BENCH_HOME": str(home)}
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M %U %S", "-o", str(out), *args],
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    elapsed, rss_kb, user, system = out.read_text().split()[-4:]
    return float(elapsed), int(rss_kb) / 1024, float(user) + float(system)


def bare_query(home: Path, floor: float = -100.0) -> tuple[float, int]:
    """The reference: per-item clamped DRACO score and per-system mean from typed verdict rows.

    The typed rows (one per verdict, columns already cast, like the staging table) and the
    criteria weights are made first, untimed; the timed query resolves judge retries, averages
    samples, applies the floor, clamps raw / positive mass to [0, 1] and means per system."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"attach '{home / 'warehouse.duckdb'}' as wh (read_only)")
    con.execute(
        """
        create table verdicts as
        select run_id, payload->>'lane' as lane, payload->>'item_id' as item_id,
               payload->>'judge_id' as judge_id, payload->>'criterion_id' as criterion_id,
               cast(payload->>'sample' as bigint) as sample,
               cast(payload->>'judge_attempt' as bigint) as judge_attempt,
               cast(payload->>'met' as boolean) as met
        from wh.raw.events where event_type = 'judge_verdict'
        """
    )
    con.execute(
        """
        create table criteria as
        select distinct run_id, payload->>'item_id' as item_id,
               payload->>'criterion_id' as criterion_id, cast(payload->>'weight' as double) as weight
        from wh.raw.events where event_type = 'rubric_criterion_registered'
        """
    )
    query = f"""
        with samples as (
            select run_id, lane, judge_id, item_id, criterion_id, sample,
                   arg_max(met, judge_attempt) as met
            from verdicts group by all
        ),
        per_criterion as (
            select run_id, lane, judge_id, item_id, criterion_id, avg(met::int) as v
            from samples group by all
        ),
        items as (
            select p.run_id, p.lane, p.judge_id, p.item_id,
                   sum(greatest(c.weight, {floor}) * p.v) as raw,
                   sum(c.weight) filter (where c.weight > 0) as positive
            from per_criterion p join criteria c using (run_id, item_id, criterion_id)
            group by all
        )
        select run_id, lane, judge_id,
               avg(case when positive is null or positive <= 0 then 0
                        else least(1, greatest(0, raw / positive)) end) as score
        from items group by all
    """
    best = math.inf
    rows = 0
    for _ in range(3):
        started = time.perf_counter()
        rows = len(con.execute(query).fetchall())
        best = min(best, time.perf_counter() - started)
    con.close()
    return best, rows


def app_pages(home: Path) -> dict[str, float]:
    """Seconds from switching to each page of the app to the end of its first render (its
    tables drawn), on the published snapshot, each page cold: a new AppTest session."""
    from streamlit.testing.v1 import AppTest

    os.environ["BENCH_HOME"] = str(home)
    entry = REPO / "app" / "streamlit_app.py"
    seconds = {}
    for page in sorted((REPO / "app" / "app_pages").glob("[a-z]*.py")):
        at = AppTest.from_file(str(entry), default_timeout=120).run()
        at.switch_page(f"app_pages/{page.name}")
        started = time.perf_counter()
        at.run()
        seconds[page.stem] = time.perf_counter() - started
        if at.exception:
            raise SystemExit(f"page {page.stem} failed: {[e.value for e in at.exception]}")
    return seconds


def raw_events(home: Path) -> int:
    """Events the warehouse holds (as many as the log: every line loads)."""
    import duckdb

    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        return con.execute("select count(*) from raw.events").fetchone()[0]


def _event_log(home: Path):
    from warehouse.log import EventLog

    return EventLog(home / "log")


def part_bytes(home: Path) -> dict[str, int]:
    """Bytes on disk per part of a home, as `bench status` counts them (bench/status.py:
    disk_usage): the log, the warehouse (with its WAL), the serving snapshot (serve.duckdb and
    its Parquet parts), dlt's pipeline directory; and the warehouse's free and total blocks."""
    from bench.status import disk_usage
    from warehouse.paths import BenchPaths

    usage = disk_usage(BenchPaths(home))
    keys = ("log", "warehouse", "snapshot", "dlt", "warehouse_free", "warehouse_blocks")
    return {key: usage[key] or 0 for key in keys}


def checkpoint_probe(home: Path) -> dict[str, int]:
    """What an explicit CHECKPOINT (then a FORCE CHECKPOINT) does to the warehouse file."""
    import duckdb

    with duckdb.connect(str(home / "warehouse.duckdb")) as con:
        con.execute("checkpoint")
    after = part_bytes(home)
    with duckdb.connect(str(home / "warehouse.duckdb")) as con:
        con.execute("force checkpoint")
    forced = part_bytes(home)
    return {
        "warehouse": after["warehouse"],
        "warehouse_free": after["warehouse_free"],
        "forced_warehouse": forced["warehouse"],
        "forced_free": forced["warehouse_free"],
    }


def measure(
    n_verdicts: int,
    root: Path,
    *,
    inline: bool = False,
    keep_log: bool = False,
    stages: int = 1,
) -> dict:
    """Every figure of one N. With `stages` > 1 the log is written and loaded in that many
    parts, each ingested before the next is written (a log that grows over months; and the
    plain segments of one part on disk at a time, not all of them: 10M verdicts are ~58 GB
    plain); `ingest` is then the sum of those ingests, its peak RSS their largest."""
    home = root / f"scale-{n_verdicts}{'-inline' if inline else ''}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    py = sys.executable
    script = str(Path(__file__).resolve())
    shape = ["--inline-bodies"] if inline else []
    figures: dict = {"verdicts_asked": n_verdicts, "shape": "inline" if inline else "referenced"}
    started = time.perf_counter()
    subprocess.run([py, script, "--internal-beside", str(home)], check=True)
    counts, ingests = [], []
    for stage in range(stages):
        writers = [
            subprocess.Popen(
                [
                    *(py, script, "--internal-generate", str(home), str(n_verdicts)),
                    *(str(part), str(stage), str(stages), *shape),
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
            for part in range(GENERATORS)
        ]
        for writer in writers:
            out, _ = writer.communicate()
            if writer.returncode != 0:
                raise SystemExit(f"generating the log failed (exit {writer.returncode})")
            counts.append([int(x) for x in out.split()])
        if stage < stages - 1:
            ingests.append(timed(home, str(BENCH), "ingest"))
            print(f"stage {stage + 1}/{stages}: ingest {ingests[-1]}", flush=True)
    figures["generate"] = (time.perf_counter() - started - sum(i[0] for i in ingests), 0.0, 0.0)
    ingests.append(timed(home, str(BENCH), "ingest"))
    figures["ingest"] = (
        sum(i[0] for i in ingests),
        max(i[1] for i in ingests),
        sum(i[2] for i in ingests),
    )
    figures["ingest_stages"] = ingests
    figures.update(
        runs=sum(c[0] for c in counts),
        verdicts=sum(c[1] for c in counts),
        events=raw_events(home),
        stages=stages,
    )
    figures["build"] = timed(home, str(BENCH), "build")
    figures["publish"] = timed(home, str(BENCH), "publish")
    figures["bytes_full"] = part_bytes(home)
    if keep_log:  # the lake measure loads the same events, then appends its own +1,000
        shutil.copytree(home / "log", home / "log.before-append")
    subprocess.run([py, script, "--internal-append", str(home), *shape], check=True)
    figures["ingest_append"] = timed(home, str(BENCH), "ingest")
    figures["build_append"] = timed(home, str(BENCH), "build")
    figures["publish_append"] = timed(home, str(BENCH), "publish")
    figures["bytes_append"] = part_bytes(home)
    figures["checkpoint"] = checkpoint_probe(home)
    figures["rescore_floor"] = timed(home, str(BENCH), "rescore", "--draco-penalty-floor", "-100")
    figures["rescore_weights"] = timed(home, str(BENCH), "rescore", "--weights", WEIGHTS)
    figures["bare_query"] = bare_query(home)
    pages = subprocess.run(
        [py, script, "--internal-app", str(home)], check=True, capture_output=True, text=True
    ).stdout
    figures["app_pages"] = json.loads(pages.strip().splitlines()[-1])
    figures["log_mb"] = part_bytes(home)["log"] / 2**20
    figures["warehouse_mb"] = (home / "warehouse.duckdb").stat().st_size / 2**20
    return figures


def measure_demo(root: Path) -> dict:
    """`bench rescore` on the demo (target <= 5 s): a penalty floor, then extraction weights."""
    home = root / "demo"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    timed(home, str(BENCH), "demo", "--no-serve")
    return {
        "rescore_floor": timed(home, str(BENCH), "rescore", "--draco-penalty-floor", "-100"),
        "rescore_weights": timed(home, str(BENCH), "rescore", "--weights", WEIGHTS),
    }


LAKE_STEPS = (
    ("ingest", "bench ingest"),
    ("build", "bench build (full)"),
    ("publish", "bench publish (after the full build)"),
    ("ingest_append", f"bench ingest (+{APPENDED:,} events)"),
    ("build_append", f"bench build (+{APPENDED:,} events)"),
    ("rescore_floor", "bench rescore --draco-penalty-floor -100"),
    ("rescore_weights", "bench rescore --weights ..."),
)


def measure_lake(local_home: Path, root: Path, servers, n_verdicts: int) -> dict:
    """The local home's log (its events before the +1,000 append) on a lake: the same steps,
    each `bench` command in its own process, the lake named by the environment."""
    from tests.lake import services

    catalog, store = servers
    home = root / f"lake-{n_verdicts}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    shutil.copytree(local_home / "log.before-append", home / "log")
    database = f"scale_{n_verdicts}"
    env = {
        "BENCH_WAREHOUSE": f"ducklake:postgres:{services.create_database(catalog, database)}",
        "BENCH_LAKE_DATA": f"s3://bench-scale/{database}",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_ENDPOINT_URL": store.endpoint,
    }
    with environment(env):
        figures: dict = {}
        figures["ingest"] = timed(home, str(BENCH), "ingest")
        figures["build"] = timed(home, str(BENCH), "build")
        figures["publish"] = timed(home, str(BENCH), "publish")
        subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--internal-append", str(home)],
            check=True,
        )
        figures["ingest_append"] = timed(home, str(BENCH), "ingest")
        figures["build_append"] = timed(home, str(BENCH), "build")
        figures["rescore_floor"] = timed(
            home, str(BENCH), "rescore", "--draco-penalty-floor", "-100"
        )
        figures["rescore_weights"] = timed(home, str(BENCH), "rescore", "--weights", WEIGHTS)
        figures["reader_query"] = reader_query(home)
        objects = store.objects("bench-scale", f"{database}/")
        figures["lake_bytes"] = (sum(objects.values()), len(objects))
        figures["catalog_bytes"] = _catalog_bytes(catalog, database)
    return figures


def reader_query(home: Path) -> float:
    """Best of 3: a reader's query of a leaderboard, opening the warehouse as `bench sql`'s
    readers would (a new connection each time, the lake attached when BENCH_WAREHOUSE says)."""
    from warehouse.lake import open_warehouse

    best = math.inf
    for _ in range(3):
        started = time.perf_counter()
        with open_warehouse(home / "warehouse.duckdb", read_only=True) as con:
            con.execute("select * from marts.draco_leaderboard").fetchall()
        best = min(best, time.perf_counter() - started)
    return best


def _catalog_bytes(catalog, database: str) -> int:
    import duckdb

    con = duckdb.connect()
    con.execute(f"attach '{catalog.url(database)}' as pg (type postgres, read_only)")
    (size,) = con.execute(
        f"select * from postgres_query('pg', 'select pg_database_size(''{database}'')')"
    ).fetchone()
    con.close()
    return int(size)


def report_lake(pairs: list[tuple[dict, dict]]) -> None:
    """Local beside lake, for each N."""
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title="benchmarks/scale.py --lake: local DuckDB file beside a DuckLake "
        "(PostgreSQL catalog + S3 data on loopback); wall (CPU), peak RSS"
    )
    table.add_column("step")
    for local, _ in pairs:
        table.add_column(f"{local['verdicts']:,} local", justify="right")
        table.add_column(f"{local['verdicts']:,} lake", justify="right")
    for key, label in LAKE_STEPS:
        cells = []
        for local, lake in pairs:
            for r in (local, lake):
                cells.append(f"{r[key][0]:.1f} s ({r[key][2]:.0f} s CPU), {r[key][1]:,.0f} MB")
        table.add_row(label, *cells)
    table.add_row(
        "reader query of draco_leaderboard (best of 3, new connection)",
        *[f"{r['reader_query'] * 1000:.0f} ms" for pair in pairs for r in pair],
    )
    table.add_row(
        "warehouse bytes after +1,000",
        *[
            cell
            for local, lake in pairs
            for cell in (
                f"{local['bytes_append']['warehouse'] / 1e6:,.0f} MB (warehouse.duckdb)",
                f"{lake['lake_bytes'][0] / 1e6:,.0f} MB in {lake['lake_bytes'][1]:,} S3 objects"
                f" + {lake['catalog_bytes'] / 1e6:,.0f} MB catalog",
            )
        ],
    )
    Console().print(table)


STEPS = (
    ("ingest", "bench ingest"),
    ("build", "bench build (full)"),
    ("publish", "bench publish (after the full build)"),
    ("ingest_append", f"bench ingest (+{APPENDED:,} events)"),
    ("build_append", f"bench build (+{APPENDED:,} events)"),
    ("publish_append", f"bench publish (+{APPENDED:,} events)"),
    ("rescore_floor", "bench rescore --draco-penalty-floor -100"),
    ("rescore_weights", "bench rescore --weights ..."),
)


def report(results: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"benchmarks/scale.py: wall (CPU), peak RSS; load average {os.getloadavg()[0]:.2f}"
    )
    table.add_column("step")
    for r in results:
        table.add_column(f"{r['verdicts']:,} verdicts, {r['shape']}", justify="right")
    table.add_row(
        "events in the log", *(f"{r['events']:,} ({r['log_mb']:,.0f} MB)" for r in results)
    )
    table.add_row("written and ingested in", *(f"{r['stages']} part(s)" for r in results))
    for key, label in STEPS:
        table.add_row(
            label,
            *(f"{r[key][0]:.1f} s ({r[key][2]:.0f} s CPU), {r[key][1]:,.0f} MB" for r in results),
        )
    table.add_row(
        "bare query (reference, best of 3)",
        *(f"{r['bare_query'][0]:.3f} s ({r['bare_query'][1]} systems)" for r in results),
    )
    table.add_row(
        "rescore / bare query",
        *(f"{r['rescore_floor'][0] / max(r['bare_query'][0], 1e-6):.0f}x" for r in results),
    )
    table.add_row("warehouse file", *(f"{r['warehouse_mb']:,.0f} MB" for r in results))
    for stage, label in (("bytes_full", "after the full build"), ("bytes_append", "after +1,000")):
        for part in ("log", "warehouse", "snapshot", "dlt"):
            table.add_row(
                f"bytes {label}: {part}", *(f"{r[stage][part] / 1e6:,.0f} MB" for r in results)
            )
        table.add_row(
            f"bytes {label}: warehouse free blocks",
            *(f"{r[stage]['warehouse_free'] / 1e6:,.0f} MB" for r in results),
        )
        table.add_row(
            f"bytes {label}: log + warehouse + snapshot",
            *(
                f"{(r[stage]['log'] + r[stage]['warehouse'] + r[stage]['snapshot']) / 1e9:,.2f} GB"
                for r in results
            ),
        )
    table.add_row(
        "warehouse after CHECKPOINT / FORCE CHECKPOINT (free blocks)",
        *(
            f"{r['checkpoint']['warehouse'] / 1e6:,.0f} ({r['checkpoint']['warehouse_free'] / 1e6:,.0f})"
            f" / {r['checkpoint']['forced_warehouse'] / 1e6:,.0f} "
            f"({r['checkpoint']['forced_free'] / 1e6:,.0f}) MB"
            for r in results
        ),
    )
    table.add_row(
        "app: slowest page, first render (target <= 2 s)",
        *(
            "{1:.2f} s ({0})".format(*max(r["app_pages"].items(), key=lambda kv: kv[1]))
            for r in results
        ),
    )
    table.add_row(
        "app: median page",
        *(f"{sorted(r['app_pages'].values())[len(r['app_pages']) // 2]:.2f} s" for r in results),
    )
    Console().print(table)
    referenced = [r for r in results if r["shape"] == "referenced"]
    if len(referenced) > 1:
        first, last = referenced[0], referenced[-1]
        growth = last["verdicts"] / first["verdicts"]
        Console().print(
            f"growth {first['verdicts']:,} -> {last['verdicts']:,} verdicts (x{growth:.0f}): "
            + ", ".join(
                f"{label.split(' (')[0] if key != 'build_append' else 'build +1k'} "
                f"x{last[key][0] / first[key][0]:.1f}"
                for key, label in STEPS
                if key in ("ingest", "build", "build_append", "rescore_floor")
            )
        )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1].startswith("--internal-"):
        home = Path(sys.argv[2])
        os.environ["BENCH_HOME"] = str(home)
        inline = "--inline-bodies" in sys.argv
        if sys.argv[1] == "--internal-generate":
            staged = [a for a in sys.argv[5:] if not a.startswith("--")]
            info = generate_draco(
                home,
                int(sys.argv[3]),
                inline=inline,
                part=int(sys.argv[4]),
                parts=GENERATORS,
                # optional: STAGE STAGES (benchmarks/log_bucket.py and storage_format.py omit them)
                **dict(zip(("stage", "stages"), map(int, staged), strict=False)),
            )
            print(info["runs"], info["verdicts"])
        elif sys.argv[1] == "--internal-append":
            append_rejudge(home, inline=inline)
        elif sys.argv[1] == "--internal-beside":
            generate_beside(home)
        elif sys.argv[1] == "--internal-app":
            print(json.dumps(app_pages(home)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", type=int, action="append", required=True)
    parser.add_argument("--keep", type=Path, help="Write the warehouses here and keep them.")
    parser.add_argument(
        "--demo", action="store_true", help="Also time `bench rescore` on the demo."
    )
    parser.add_argument(
        "--inline-bodies",
        action="store_true",
        help="Also measure each N with every judge request holding the whole report (the shape "
        "before references), beside the shape the judge writes now.",
    )
    parser.add_argument(
        "--stages",
        type=int,
        default=1,
        help="Write and ingest each log in this many parts (each N): needed at 10M, whose "
        "plain segments would not fit on disk at once. The ingest figure is their sum.",
    )
    parser.add_argument(
        "--lake",
        action="store_true",
        help="Also measure each N on a DuckLake (PostgreSQL catalog + S3 data on loopback).",
    )
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    servers = ExitStack()
    try:
        results, lake_pairs = [], []
        if args.lake:
            from tests.lake import services

            lake_servers = (
                servers.enter_context(services.postgres()),
                servers.enter_context(services.s3()),
            )
            lake_servers[1].bucket("bench-scale")
        for n in args.verdicts:
            for inline in (False, True) if args.inline_bodies else (False,):
                results.append(
                    measure(
                        n,
                        root,
                        inline=inline,
                        keep_log=args.lake and not inline,
                        stages=args.stages,
                    )
                )
                print(results[-1], flush=True)
                if args.lake and not inline:
                    home = root / f"scale-{n}"
                    results[-1]["reader_query"] = reader_query(home)
                    lake = measure_lake(home, root, lake_servers, n)
                    lake_pairs.append((results[-1], lake))
                    print(lake, flush=True)
                    if args.keep is None:
                        shutil.rmtree(root / f"lake-{n}", ignore_errors=True)
                if args.keep is None:  # an inline 1M home is tens of GB
                    shutil.rmtree(
                        root / f"scale-{n}{'-inline' if inline else ''}", ignore_errors=True
                    )
        report(results)
        if lake_pairs:
            report_lake(lake_pairs)
        if args.demo:
            demo = measure_demo(root)
            print(
                "demo: "
                + ", ".join(
                    f"{label} {demo[key][0]:.1f} s ({demo[key][2]:.1f} s CPU)"
                    for key, label in (
                        ("rescore_floor", "bench rescore --draco-penalty-floor -100"),
                        ("rescore_weights", "bench rescore --weights ..."),
                    )
                )
                + "; target <= 5 s",
                flush=True,
            )
    finally:
        servers.close()
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
