"""benchmarks/scale.py writes a log as heavy as a real run, in the shape the judge writes now.

The generator's judge records are checked against the real LlmJudge over the Anthropic SDK
before it writes anything (`JudgeCalls.check`); here the log it wrote is read back: reports of
8-20 kB through the real normaliser, the vendor's raw response holding each report, every
judge request referencing its report (and rebuilding to the bytes recorded as sent), and with
`inline=True` every request holding the report instead.
"""

from __future__ import annotations

import importlib.util
import json
from collections import Counter, defaultdict

import pytest

from tests.conftest import REPO_ROOT
from warehouse.bodies import expand_body, text_sha256, verify_sent
from warehouse.log import EventLog


@pytest.fixture(scope="module")
def scale():
    spec = importlib.util.spec_from_file_location("scale", REPO_ROOT / "benchmarks" / "scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _events(home):
    return [event for _, event in EventLog(home / "log").read()]


@pytest.mark.parametrize("inline", [False, True], ids=["referenced", "inline"])
def test_scale_log_is_shaped_like_a_real_run(scale, tmp_path, monkeypatch, shared_data, inline):
    monkeypatch.setattr(scale, "DRACO_JSONL", shared_data / "draco" / "test.jsonl")
    info = scale.generate_draco(tmp_path, 500, inline=inline)
    events = _events(tmp_path)
    by_type = defaultdict(list)
    for event in events:
        by_type[event["event_type"]].append(event["payload"])
    reports = {
        e["event_id"]: e["payload"]["judged_text"]
        for e in events
        if e["event_type"] == "report_normalized"
    }
    assert info["verdicts"] == len(by_type["judge_verdict"]) >= 500
    assert len(reports) == len(scale.SYSTEMS)  # one task, every system
    raw_outputs = [p["raw_output"] for p in by_type["research_completed"]]
    assert all(8_000 <= len(text) <= 21_000 for text in raw_outputs)
    assert len(set(raw_outputs)) == len(raw_outputs)
    results = [p for p in by_type["provider_call_completed"] if p["stage"] == "research:result"]
    assert all(json.loads(p["raw_body"])["output"]["text"] in raw_outputs for p in results) and len(
        results
    ) == len(raw_outputs)

    shapes = Counter()
    for verdict in by_type["judge_verdict"]:
        report = reports[verdict["source_event_id"]]
        records = [*verdict["earlier_calls"], *([verdict["llm"]] if verdict["llm"] else [])]
        assert records or verdict["outcome"] == "failed"
        for record in records:
            request = record["request"]
            if inline:
                assert "body_refs" not in request and "body_sha256" not in request
                prompt = request["body"]["messages"][0]["content"]
                assert report in prompt
            else:
                assert report not in json.dumps(record)
                assert request["body_refs"][0]["sha256"] == text_sha256(report)
                assert verify_sent(request, [report]) is True
                assert (
                    report in json.loads(expand_body(request, [report]))["messages"][0]["content"]
                )
            shapes[verdict["outcome"]] += 1
    assert shapes["parsed"] and shapes["unparsed"]  # re-asks are recorded too
