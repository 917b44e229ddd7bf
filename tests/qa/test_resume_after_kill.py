"""SIGKILL a QA run mid-way (a slow loopback LLM), re-run: nothing lost, nothing doubled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.qa.conftest import REPO_ROOT, events, stage_counts
from tests.qa.llm_fake import FakeLlmServer
from warehouse.log import EventLog
from warehouse.verify import verify_log

CANARY = "sk-canary-91c2-kill-test-never-logged"

RUN_SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from collectors.demo.extraction_corpus import load_demo_corpus
    from collectors.llm import make_backend
    from collectors.qa.lane_registry import build_lanes
    from collectors.local_corpus import from_extraction_corpus
    from collectors.qa.offline import LexicalRelevanceJudge, NormalizedMatchGrader
    from collectors.qa.roles import LlmSynthesizer
    from collectors.qa.runner import run_qa
    from collectors.qa.simpleqa import load_simpleqa
    from warehouse.log import EventLog

    log_dir, csv_path, corpus_dir, base_url = sys.argv[1:5]
    corpus = from_extraction_corpus(load_demo_corpus(Path(corpus_dir)))
    backend = make_backend("openai-compatible", base_url=base_url, max_retries=0)
    summary = run_qa(
        EventLog(Path(log_dir)), load_simpleqa(Path(csv_path)),
        build_lanes(["local-bm25", "closed-book"], corpus=corpus), limit=10, random_state=0,
        synthesizer=LlmSynthesizer(backend, model="slow-synth"), grader=NormalizedMatchGrader(),
        relevance_judge=LexicalRelevanceJudge(), llm_concurrency=1,
    )
    print(summary.status)
    """
)


def run_args(log_dir: Path, simpleqa_csv: Path, corpus_dir: Path, base_url: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        RUN_SCRIPT,
        str(log_dir),
        str(simpleqa_csv),
        str(corpus_dir),
        base_url,
    ]


def test_sigkill_mid_run_then_resume(tmp_path, simpleqa_csv, demo_corpus_dir):
    log_dir = tmp_path / "log"
    env = {**os.environ, "OPENAI_COMPATIBLE_API_KEY": CANARY}
    with FakeLlmServer(delay_s=0.15) as fake:
        base_url = f"{fake.base_url}/v1"
        process = subprocess.Popen(
            run_args(log_dir, simpleqa_csv, demo_corpus_dir, base_url),
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        log = EventLog(log_dir)
        deadline = time.monotonic() + 30
        try:
            while time.monotonic() < deadline and process.poll() is None:
                if len(events(log, "answer_synthesized")) >= 5:
                    break
                time.sleep(0.02)
            assert process.poll() is None, f"the run ended before the kill: {process.communicate()}"
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == -signal.SIGKILL

        before = events(log)
        answered_before = {e["event_id"] for e in before if e["event_type"] == "answer_synthesized"}
        assert 5 <= len(answered_before) < 20 and not events(log, "run_finished")

        fake.state.delay_s = 0.0
        rerun = subprocess.run(
            run_args(log_dir, simpleqa_csv, demo_corpus_dir, base_url),
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stdout.strip() == "finished"

    after = events(log)
    ids = [e["event_id"] for e in after]
    assert len(ids) == len(set(ids)), "duplicate event ids after resume"
    assert {e["event_id"] for e in before} <= set(ids), "events written before the kill were lost"
    stages = stage_counts(log)
    assert set(stages.values()) == {1}
    assert len({(item, lane) for item, lane, _, stage in stages if stage == "synthesize"}) == 20
    assert len({(item, lane) for item, lane, _, stage in stages if stage == "grade"}) == 20
    assert len(events(log, "run_finished")) == 1
    assert verify_log(log).intact
    assert CANARY.encode() not in b"".join(
        p.read_bytes() for p in log_dir.rglob("*") if p.is_file()
    )
