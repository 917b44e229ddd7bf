"""Log bytes of one judged DRACO task, the report copied into every judge request vs stored once.

    python benchmarks/judge_bodies.py [--report-bytes 1000000] [--criteria 40] [--samples 3]

"after": the real runner, a research lane against the loopback research fake answering one
report of `--report-bytes`, and the real LLM judge (OpenAI SDK) against the loopback LLM fake:
the log as this checkout writes it (each judge request references the report, stored once in
its `report_normalized` event). "before": the same events with every judge request recorded as
the code before it wrote them (the body parsed, the report inline), through the same event
models and LogWriter. Prints the bytes per event type side by side and checks that every
recorded request of "after" rebuilds to the bytes the fake received. A size figure, not a
timed test.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from collectors.draco.dataset import dataset_ref  # noqa: E402
from collectors.draco.judge import LlmJudge  # noqa: E402
from collectors.draco.model import Criterion, RubricTask, RubricTaskSet  # noqa: E402
from collectors.draco.normalize import NORMALIZER  # noqa: E402
from collectors.draco.prompts import RESEARCH_INSTRUCTION_ID, load_prompt  # noqa: E402
from collectors.draco.runner import plan_draco_run, run_draco  # noqa: E402
from collectors.draco.systems import make_lane  # noqa: E402
from collectors.llm import make_backend  # noqa: E402
from tests.fakes.research_fake import FakeResearchServer  # noqa: E402
from tests.qa.llm_fake import FakeLlmServer  # noqa: E402
from warehouse.bodies import expand_body  # noqa: E402
from warehouse.canonical import sha256_hex  # noqa: E402
from warehouse.events import PAYLOAD_MODELS  # noqa: E402
from warehouse.log import EventLog  # noqa: E402

LANE = "exa_agent_high"
EXA_KEY = "sk-bench-judge-bodies-0000"
PROBLEM = (
    "Compare how three estimators of staggered difference-in-differences handle heterogeneous "
    "treatment effects, what each assumes about parallel trends and anticipation, and which "
    "one applied labour and health economics papers adopted from 2020 to 2024. "
) * 4  # about 900 characters, the length of a DRACO problem


def report_text(size: int) -> str:
    """`size` characters of prose that does not repeat (a real report does not either)."""
    parts, total, n = [], 0, 0
    while total < size:
        digest = hashlib.sha256(str(n).encode()).hexdigest()
        sentence = f"Finding {n}: the measured value {digest[:12]} is reported by source {n % 97}. "
        parts.append(sentence)
        total += len(sentence)
        n += 1
    return "".join(parts)[:size]


def task_set(criteria: int) -> RubricTaskSet:
    task = RubricTask(
        item_id="bench-task-1",
        position=0,
        domain="economics",
        problem=PROBLEM,
        rubric_id="bench-rubric",
        criteria=tuple(
            Criterion(
                criterion_id=f"c{n}",
                axis="factual-accuracy",
                axis_title="Factual accuracy",
                position=n,
                weight=-5 if n % 8 == 7 else 3,
                requirement=f"States finding {n} with the value it measured and the source that "
                "reported it, and says how that source collected the data.",
            )
            for n in range(criteria)
        ),
    )
    return RubricTaskSet(
        name="bench-judge-bodies",
        uri="benchmarks/judge_bodies.py",
        sha256=sha256_hex(f"bench-judge-bodies:{criteria}"),
        revision=None,
        tasks=(task,),
    )


def verdict(prompt: str) -> str:
    return json.dumps({"verdict": "MET" if len(prompt) % 2 else "UNMET", "justification": "ok"})


def run_after(log: EventLog, report: str, criteria: int, samples: int) -> list[bytes]:
    """The real run; returns the request bodies the LLM fake received."""
    tasks = task_set(criteria)
    with (
        FakeResearchServer(polls_to_complete=1, keys={"exa": EXA_KEY}) as research,
        FakeLlmServer(verdict) as llm,
    ):
        research.set_report("exa", report)
        lane = make_lane(
            LANE,
            base_urls=research.base_urls(),
            environ={"EXA_API_KEY": EXA_KEY},
            poll_interval_s=0.01,
            rate_per_s=1000.0,
        )
        backend = make_backend("openai-compatible", base_url=f"{llm.base_url}/v1", max_retries=0)
        judge = LlmJudge(backend, model="bench-judge", temperature=0.0, samples=samples)
        plan = plan_draco_run(
            benchmark="rubric",
            dataset=dataset_ref(tasks),
            tasks=tasks.tasks,
            lanes=[lane],
            instruction=load_prompt(RESEARCH_INSTRUCTION_ID),
        )
        summary = run_draco(log, plan, judge, NORMALIZER)
        assert summary.status == "finished", summary.status
        return [call.raw for call in llm.calls]


def inline(event: dict, texts: dict[str, str]) -> dict:
    """The event as the code before references wrote it: each judge request's body parsed,
    the report inside, no body_sha256 (the same models validate and dump it)."""
    if event["event_type"] != "judge_verdict":
        return event
    payload = json.loads(json.dumps(event["payload"]))
    for record in [payload.get("llm"), *payload.get("earlier_calls", [])]:
        if record and record.get("request"):
            request = record["request"]
            body = json.loads(expand_body(request, texts))
            record["request"] = {k: request[k] for k in ("method", "url", "headers")}
            record["request"]["body"] = body
    model = PAYLOAD_MODELS["judge_verdict"]
    return {**event, "payload": model.model_validate(payload).model_dump(mode="json")}


def bytes_by_type(log: EventLog) -> Counter:
    sizes: Counter = Counter()
    for segment in log.segments():
        with log.open_segment(segment) as handle:  # plain or, once ingested, compressed
            data = handle.read()
        for line in data.split(b"\n"):
            if line:
                sizes[json.loads(line)["event_type"]] += len(line) + 1
    return sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report-bytes", type=int, default=1_000_000)
    parser.add_argument("--criteria", type=int, default=40)
    parser.add_argument("--samples", type=int, default=3)
    args = parser.parse_args()
    report = report_text(args.report_bytes)
    with tempfile.TemporaryDirectory(prefix="judge-bodies-") as tmp:
        after = EventLog(Path(tmp) / "after")
        received = run_after(after, report, args.criteria, args.samples)
        events = [event for _, event in after.read()]
        texts = {
            sha256_hex(e["payload"]["judged_text"]): e["payload"]["judged_text"]
            for e in events
            if e["event_type"] == "report_normalized"
        }
        rebuilt = [
            expand_body(record["request"], texts).encode()
            for e in events
            if e["event_type"] == "judge_verdict"
            for record in [*e["payload"]["earlier_calls"], e["payload"]["llm"]]
        ]
        assert Counter(rebuilt) == Counter(received), "a request did not rebuild to its bytes"
        before = EventLog(Path(tmp) / "before")
        with before.writer() as writer:
            for event in events:  # one at a time: 120 inline copies at once is not the point
                writer.append([inline(event, texts)])
        sizes = {"before": bytes_by_type(before), "after": bytes_by_type(after)}
    verdicts = sum(1 for e in events if e["event_type"] == "judge_verdict")
    print(
        f"one task, report {args.report_bytes:,} B, {args.criteria} criteria x {args.samples} "
        f"samples = {verdicts} judge_verdict events; {len(received)} requests rebuilt "
        "byte-identical to what the LLM fake received"
    )
    width = max(map(len, sizes["before"]))
    print(f"{'event type':<{width}} {'before (B)':>14} {'after (B)':>14} {'ratio':>8}")
    totals: dict[str, int] = defaultdict(int)
    for event_type in sorted(sizes["before"], key=lambda t: -sizes["before"][t]):
        b, a = sizes["before"][event_type], sizes["after"][event_type]
        totals["before"] += b
        totals["after"] += a
        print(f"{event_type:<{width}} {b:>14,} {a:>14,} {b / a:>7.1f}x")
    b, a = totals["before"], totals["after"]
    print(f"{'log total':<{width}} {b:>14,} {a:>14,} {b / a:>7.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
