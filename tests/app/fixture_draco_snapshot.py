"""A serving snapshot with the deep-research (DRACO) marts, built from REAL runner events.

`build_draco_snapshot(home)` runs the real rubric-judged runner offline, then the real
downstream half (dlt ingest -> dbt build -> publish, `transform.pipeline.refresh`), into `home`:

* the six offline demo rubric tasks (`collectors.demo.draco_tasks`), two research lanes:
  `local-rag` over the offline demo corpus, and `local-rag-planted`, the same offline method
  over a one-document corpus whose text and title carry an HTML/JS payload. Only the assert
  task shares words with that document, so its report carries the payload and the other five
  tasks fail (empty_output), twice each (two invocations, two research attempts);
* three judge regimes on the same run: `OfflineJudge(samples=2)` during the run, then
  `rejudge` with `OfflineJudge(samples=1)`, then `rejudge` twice with `FlakyJudge` (2 samples:
  the offline verdict, but sample 2 flips some criteria, one criterion per report is unparsed
  with the payload in its raw completion, one fails on its first judge attempt and is retried
  as judge attempt 2 by the second rejudge), then `rejudge` with the real `LlmJudge` (OpenAI
  SDK, 1 sample) against the loopback fake of the LLM API: verdicts whose recorded requests
  reference the judged report instead of copying it.

A build costs one `dbt build` (~1 min on 2 shared cores): `draco_snapshot(tmp_path_factory)`
builds once per pytest process and every test copies the published file.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from collectors.demo.draco_tasks import demo_task_set
from collectors.demo.extraction_corpus import build_demo_corpus, load_demo_corpus
from collectors.draco.dataset import dataset_ref
from collectors.draco.judge import LlmJudge, OfflineJudge
from collectors.draco.model import Criterion, JudgeSample, RubricTask
from collectors.draco.normalize import NORMALIZER, NORMALIZER_VERSION
from collectors.draco.prompts import RESEARCH_INSTRUCTION_ID, load_prompt
from collectors.draco.runner import plan_draco_run, regime_id, rejudge, run_draco
from collectors.draco.systems import make_lane
from collectors.draco.systems.local_rag import LocalRagLane
from collectors.llm import make_backend
from collectors.local_corpus import from_documents_jsonl, from_extraction_corpus
from tests.qa.llm_fake import FakeLlmServer
from tests.shared_build import built_once
from transform.pipeline import refresh
from warehouse.events import LlmCallRecord, SystemRef
from warehouse.log import EventLog
from warehouse.paths import BenchPaths

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
UNPARSED_PAYLOAD = "<b>MET?</b><script>alert(2)</script>"
PAYLOADS = (SCRIPT, IMG)
PLANTED_LANE = "local-rag-planted"
PLANTED_URL = "https://planted.invalid/assert"
# Shares words only with the assert task's problem (no "Python", "statement", "when", "does").
PLANTED_DOCUMENT = {
    "url": PLANTED_URL,
    "title": f"Assertions {IMG}",
    "text": (
        f"An assert raises AssertionError unless the condition holds {SCRIPT}. "
        f"Assertions vanish under optimization {IMG}. "
        "The extended form passes a message to AssertionError."
    ),
}


class PlantedRagLane(LocalRagLane):
    """The offline local-rag method under its own lane name, over the planted corpus."""

    lane = PLANTED_LANE


class FlakyJudge:
    """The offline lexical judge with the defects real LLM judges have, deterministically:
    sample 2 flips every criterion whose id hashes to 0 mod 3 (sample disagreement), the first
    criterion of every rubric is unparsed (least favourable verdict, raw completion kept), and
    the second fails on its first judge attempt only (retried on the next invocation)."""

    official = False
    prompt_id = "fixture-flaky-judge"
    prompt_sha256 = hashlib.sha256(b"fixture-flaky-judge@1").hexdigest()

    def __init__(self) -> None:
        self.samples = 2
        self.judge_id = "fixture-flaky@1|n=2"
        self._offline = OfflineJudge(samples=1)
        self._failed_once: set[tuple[str, str, int, int]] = set()

    def system_ref(self) -> SystemRef:
        return SystemRef(
            name="fixture-flaky",
            version="1",
            settings={"provider": "offline", "model": "fixture-flaky-model", "samples": 2},
        )

    def _record(self, completion: str) -> LlmCallRecord:
        return LlmCallRecord(
            provider="offline",
            model="fixture-flaky-model",
            prompt_id=self.prompt_id,
            prompt_sha256=self.prompt_sha256,
            raw_completion=completion,
        )

    def judge(
        self, task: RubricTask, criterion: Criterion, judged_text: str, *, sample: int
    ) -> JudgeSample:
        least_favourable = criterion.polarity == "negative"
        position = [c.criterion_id for c in task.criteria].index(criterion.criterion_id)
        if position == 0:
            record = self._record(UNPARSED_PAYLOAD)
            return JudgeSample(
                outcome="unparsed",
                verdict=None,
                met=least_favourable,
                justification=None,
                reasks=1,
                llm=record,
                calls=(record, record),
            )
        key = (task.item_id, criterion.criterion_id, sample, hash(judged_text))
        if position == 1 and key not in self._failed_once:
            self._failed_once.add(key)
            return JudgeSample(
                outcome="failed",
                verdict=None,
                met=least_favourable,
                justification=None,
                reasks=0,
                llm=None,
                error_class="http_status",
                error_message="HTTP 529 overloaded (fixture)",
            )
        base = self._offline.judge(task, criterion, judged_text, sample=1)
        met = base.met
        digest = int(hashlib.sha256(criterion.criterion_id.encode()).hexdigest(), 16)
        if sample == 2 and digest % 3 == 0:
            met = not met
        verdict = "MET" if met else "UNMET"
        justification = f"sample {sample}: {base.justification}"
        record = self._record(f'{{"verdict": "{verdict}", "justification": "{justification}"}}')
        return JudgeSample(
            outcome="parsed",
            verdict=verdict,
            met=met,
            justification=justification,
            reasks=0,
            llm=record,
            calls=(record,),
        )


def llm_verdict(prompt: str) -> str:
    """The loopback LLM judge's answer: MET for prompts of even length."""
    verdict = "MET" if len(prompt) % 2 == 0 else "UNMET"
    return json.dumps({"verdict": verdict, "justification": f"{verdict} by the fixture judge."})


@dataclass(frozen=True)
class DracoSnapshot:
    home: Path
    serve_db: Path
    run_id: str
    lanes: tuple[str, ...]
    judge_ids: tuple[str, ...]  # offline n=2, offline n=1, flaky, the LLM judge over loopback
    planted_item_id: str
    failed_item_ids: tuple[str, ...]


def build_draco_snapshot(home: Path) -> DracoSnapshot:
    paths = BenchPaths(Path(home)).ensure()
    corpus_dir = build_demo_corpus(paths.home / "demo-corpus")
    demo_passages = from_extraction_corpus(load_demo_corpus(corpus_dir))
    planted_jsonl = paths.home / "planted.jsonl"
    planted_jsonl.write_text(json.dumps(PLANTED_DOCUMENT) + "\n", encoding="utf-8")
    task_set = demo_task_set()
    plan = plan_draco_run(
        benchmark="rubric",
        dataset=dataset_ref(task_set),
        tasks=task_set.tasks,
        lanes=[
            make_lane("local-rag", corpus=demo_passages),
            PlantedRagLane(from_documents_jsonl(planted_jsonl)),
        ],
        instruction=load_prompt(RESEARCH_INSTRUCTION_ID),
    )
    log = EventLog(paths.log_dir)
    offline_2, offline_1, flaky = OfflineJudge(samples=2), OfflineJudge(samples=1), FlakyJudge()
    for _ in range(2):  # the second invocation retries the failed research as attempt 2
        run_draco(
            log,
            plan,
            offline_2,
            NORMALIZER,
            max_research_attempts=2,
        )
    rejudge(
        log,
        plan.run_id,
        offline_1,
        NORMALIZER,
    )
    rejudge(log, plan.run_id, flaky, NORMALIZER)
    rejudge(log, plan.run_id, flaky, NORMALIZER)  # retries the failed samples as judge attempt 2
    with FakeLlmServer(llm_verdict) as fake:
        backend = make_backend("openai-compatible", base_url=f"{fake.base_url}/v1", max_retries=0)
        llm = LlmJudge(backend, model="fixture-llm-judge", temperature=0.0, samples=1)
        rejudge(log, plan.run_id, llm, NORMALIZER)
    refresh(paths)

    planted_item = task_set.tasks[0].item_id  # the assert task
    return DracoSnapshot(
        home=paths.home,
        serve_db=paths.serve_db,
        run_id=plan.run_id,
        lanes=("local-rag", PLANTED_LANE),
        judge_ids=tuple(
            regime_id(j, NORMALIZER_VERSION) for j in (offline_2, offline_1, flaky, llm)
        ),
        planted_item_id=planted_item,
        failed_item_ids=tuple(t.item_id for t in task_set.tasks[1:]),
    )


def draco_snapshot(tmp_path_factory: pytest.TempPathFactory) -> DracoSnapshot:
    """The snapshot, built once per pytest session for every xdist worker (both DRACO test
    modules share it)."""
    return built_once(tmp_path_factory, "draco-home", build_draco_snapshot)


def install(snapshot: DracoSnapshot, bench_home: Path) -> Path:
    """Copy the published file into a test's BENCH_HOME (never read the build's copy)."""
    target = bench_home / "serve.duckdb"
    shutil.copyfile(snapshot.serve_db, target)
    return target
