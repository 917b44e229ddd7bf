"""SIGKILL a DRACO run while it is judging (loopback vendor + slow loopback judge), re-run it:
exactly one verdict per criterion × sample, no system output lost, no system called again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

from collectors.draco.dataset import load_draco
from tests.fakes.research_fake import FakeResearchServer
from tests.qa.llm_fake import FakeLlmServer
from warehouse.log import EventLog
from warehouse.verify import verify_log

REPO_ROOT = Path(__file__).resolve().parents[2]
EXA_KEY = "sk-canary-draco-kill-exa-7f3e"
JUDGE_KEY = "sk-canary-draco-kill-judge-19ab"
TASKS, SAMPLES = 2, 3

RUN_SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from collectors.draco.dataset import dataset_ref, load_draco
    from collectors.draco.judge import LlmJudge
    from collectors.draco.normalize import NORMALIZER
    from collectors.draco.plan import select_tasks
    from collectors.draco.prompts import RESEARCH_INSTRUCTION_ID, load_prompt
    from collectors.draco.runner import plan_draco_run, run_draco
    from collectors.draco.systems import make_lane
    from collectors.llm import make_backend
    from warehouse.log import EventLog

    log_dir, draco_file, research_url, judge_url, tasks, samples = sys.argv[1:7]
    task_set = load_draco(Path(draco_file))
    lanes = [
        make_lane(name, base_urls={"exa": research_url}, poll_interval_s=0.01)
        for name in ("exa_agent_high", "exa_agent_xhigh")
    ]
    plan = plan_draco_run(
        benchmark="draco", dataset=dataset_ref(task_set),
        tasks=select_tasks(task_set, limit=int(tasks)), lanes=lanes,
        instruction=load_prompt(RESEARCH_INSTRUCTION_ID),
    )
    judge = LlmJudge(
        make_backend("openai-compatible", base_url=judge_url, max_retries=0),
        model="slow-judge", samples=int(samples),
    )
    summary = run_draco(EventLog(Path(log_dir)), plan, judge, NORMALIZER, judge_concurrency=2)
    print(summary.status)
    """
)


def verdict(prompt: str) -> str:
    return json.dumps({"verdict": "MET" if "the" in prompt else "UNMET", "justification": "ok."})


def events(log: EventLog, event_type: str) -> list[dict]:
    return [e for _raw, e in log.read() if e["event_type"] == event_type]


def test_sigkill_during_judging_then_resume(tmp_path, shared_data):
    draco_file = shared_data / "draco" / "test.jsonl"
    criteria = sum(len(t.criteria) for t in load_draco(draco_file).tasks[:TASKS])
    expected_verdicts = criteria * SAMPLES * 2  # two systems
    log_dir = tmp_path / "log"
    env = {
        **os.environ,
        "EXA_API_KEY": EXA_KEY,
        "OPENAI_COMPATIBLE_API_KEY": JUDGE_KEY,
    }
    with (
        FakeResearchServer(polls_to_complete=1, keys={"exa": EXA_KEY}) as vendor,
        FakeLlmServer(verdict, delay_s=0.02) as judge,
    ):
        args = [
            sys.executable,
            "-c",
            RUN_SCRIPT,
            str(log_dir),
            str(draco_file),
            f"{vendor.base_url}/exa",
            f"{judge.base_url}/v1",
            str(TASKS),
            str(SAMPLES),
        ]
        process = subprocess.Popen(
            args, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        log = EventLog(log_dir)
        deadline = time.monotonic() + 60
        try:
            while time.monotonic() < deadline and process.poll() is None:
                if log_dir.exists() and len(events(log, "judge_verdict")) >= 40:
                    break
                time.sleep(0.05)
            assert process.poll() is None, f"the run ended before the kill: {process.communicate()}"
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == -signal.SIGKILL

        before_outputs = {e["event_id"]: e for e in events(log, "research_completed")}
        before_verdicts = len(events(log, "judge_verdict"))
        assert 40 <= before_verdicts < expected_verdicts
        assert not events(log, "run_finished")
        vendor_calls = len(vendor.requests)

        judge.state.delay_s = 0.0
        rerun = subprocess.run(
            args, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert rerun.returncode == 0, rerun.stderr
        assert rerun.stdout.strip() == "finished"
        # Resume calls no research system for a unit whose output is stored.
        new_vendor_calls = len(vendor.requests) - vendor_calls
        assert new_vendor_calls <= 3 * (2 * TASKS - len(before_outputs))

    log = EventLog(log_dir)
    outputs = {e["event_id"]: e for e in events(log, "research_completed")}
    assert set(before_outputs) <= set(outputs), "a stored system output was lost"
    assert len(outputs) == 2 * TASKS
    verdicts = events(log, "judge_verdict")
    per_sample = Counter(
        (
            v["payload"]["lane"],
            v["payload"]["item_id"],
            v["payload"]["criterion_id"],
            v["payload"]["sample"],
        )
        for v in verdicts
    )
    assert len(per_sample) == expected_verdicts
    assert set(per_sample.values()) == {1}, "a criterion × sample was judged twice"
    assert len(events(log, "run_finished")) == 1
    assert verify_log(log).intact
    stored = b"".join(p.read_bytes() for p in log_dir.rglob("*") if p.is_file())
    assert EXA_KEY.encode() not in stored and JUDGE_KEY.encode() not in stored
