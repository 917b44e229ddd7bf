"""The judged report is stored once: a DRACO run whose real LLM judge (the vendor SDK against a
loopback fake of its API) records every request with the report referenced, not copied, and
every recorded request rebuilds to the exact bytes the fake received."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from collectors.draco.dataset import dataset_ref, load_draco
from collectors.draco.judge import LlmJudge
from collectors.draco.normalize import NORMALIZER
from collectors.draco.plan import select_tasks
from collectors.draco.prompts import JUDGE_PROMPT_ID, RESEARCH_INSTRUCTION_ID, load_prompt
from collectors.draco.runner import plan_draco_run, run_draco
from collectors.draco.systems import make_lane
from collectors.llm import make_backend
from tests.fakes.research_fake import FakeResearchServer
from tests.qa.llm_fake import FakeLlmServer
from warehouse.bodies import expand_body, json_string_body, marker, text_sha256, verify_sent
from warehouse.events import JudgeVerdict
from warehouse.log import EventLog
from warehouse.verify import verify_log

LANE = "exa_agent_high"
EXA_KEY = "sk-canary-refs-exa-0000"
# About 20 kB that JSON must escape in every way: quotes, backslashes, CRLF (normalised to LF),
# tabs, control characters, non-ASCII, U+2028, and marker-like text naming another sha256.
PARAGRAPH = (
    'The measured value is 42 "exactly" (±0.5 µm) — see C:\\data\\run.csv;\r\n'
    "\tTab-indented note \u2028 with a line separator, a bell \x07 and résumé ünïcode. "
    f"A stray {marker('f' * 64)} is only text.\n\n"
)
REPORT = "# Findings\n\n" + PARAGRAPH * 90
REASK = load_prompt(JUDGE_PROMPT_ID).section("reask")


@pytest.fixture(scope="module")
def draco(shared_data: Path):
    return load_draco(shared_data / "draco" / "test.jsonl")


def reply(prompt: str) -> str:
    """MET or UNMET by the prompt's length; prose without JSON (a re-ask follows) whenever the
    prompt's length is a multiple of 7 and it is not a re-ask already."""
    if len(prompt) % 7 == 0 and REASK not in prompt:
        return "The report meets it, I think."
    verdict = "MET" if len(prompt) % 2 else "UNMET"
    return json.dumps({"verdict": verdict, "justification": "Checked against the report."})


def lines_of(log: EventLog) -> list[str]:
    """Every line of every segment, as stored."""
    return [
        line
        for segment in log.segments()
        for line in segment.read_text("utf-8").split("\n")
        if line
    ]


@pytest.mark.parametrize("provider", ["anthropic", "openai-compatible"])
def test_judge_requests_reference_the_stored_report_and_rebuild_to_the_bytes_sent(
    tmp_path, draco, monkeypatch, provider
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-canary-refs-0000")
    log = EventLog(tmp_path / "log")
    with (
        FakeResearchServer(polls_to_complete=1, keys={"exa": EXA_KEY}) as research,
        FakeLlmServer(reply) as llm,
    ):
        research.set_report("exa", REPORT)
        lane = make_lane(
            LANE,
            base_urls=research.base_urls(),
            environ={"EXA_API_KEY": EXA_KEY},
            poll_interval_s=0.01,
            rate_per_s=1000.0,
        )
        base_url = llm.base_url if provider == "anthropic" else f"{llm.base_url}/v1"
        judge = LlmJudge(
            make_backend(provider, base_url=base_url, max_retries=0),
            model="judge-test",
            temperature=0.0,
            samples=2,
        )
        plan = plan_draco_run(
            benchmark="draco",
            dataset=dataset_ref(draco),
            tasks=select_tasks(draco, limit=1),
            lanes=[lane],
            instruction=load_prompt(RESEARCH_INSTRUCTION_ID),
        )
        summary = run_draco(log, plan, judge, NORMALIZER)
        received = [call.raw for call in llm.calls]
    assert summary.status == "finished" and summary.verdicts == 2 * len(plan.tasks[0].criteria)

    events = [event for _, event in log.read()]
    (normalized,) = [e for e in events if e["event_type"] == "report_normalized"]
    judged_text = normalized["payload"]["judged_text"]
    assert len(judged_text) > 15_000 and "\u2028" in judged_text and "\r" not in judged_text
    verdicts = [e for e in events if e["event_type"] == "judge_verdict"]
    assert {v["payload"]["source_event_id"] for v in verdicts} == {normalized["event_id"]}

    # The log holds the judged text in its report event, and in no verdict.
    stored_form = json_string_body(judged_text)
    lines = lines_of(log)
    holding = [json.loads(line)["event_type"] for line in lines if stored_form in line]
    assert holding == ["report_normalized"]
    verdict_lines = [line for line in lines if '"event_type":"judge_verdict"' in line]
    assert len(verdict_lines) == len(verdicts)
    # what is left is the prompt around the report (template, problem, criterion): 5-10 kB
    assert max(len(line.encode()) for line in verdict_lines) < len(judged_text.encode()) // 2

    # Every recorded call (re-asked first answers too) rebuilds to what the fake received.
    records = [
        record
        for verdict in verdicts
        for record in [*verdict["payload"]["earlier_calls"], verdict["payload"]["llm"]]
    ]
    assert sum(v["payload"]["reasks"] for v in verdicts) > 0  # re-asks were recorded too
    assert len(records) == len(received)
    rebuilt = []
    for record in records:
        request = record["request"]
        assert [ref["sha256"] for ref in request["body_refs"]] == [text_sha256(judged_text)]
        assert verify_sent(request, [judged_text]) is True
        rebuilt.append(expand_body(request, [judged_text]).encode("utf-8"))
    assert Counter(rebuilt) == Counter(received)
    # ... and the events still validate as the contract's models, and the chain holds.
    assert all(JudgeVerdict.model_validate(v["payload"]).llm.request.body_refs for v in verdicts)
    assert verify_log(log).intact
