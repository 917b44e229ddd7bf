"""One serving snapshot of other people's results and the answer-product series, from REAL
events through the real commands and dbt (the Imported results and QA series pages).

`build_imports_snapshot(home)`:

* DRACO imports: a valyu-benchmarks grading file and its inference file, generated from the
  real DRACO test split by tests/imports/valyu_fixture.py (no third-party file is copied),
  imported with `bench import draco-results ... --format valyu`; the inference run is then
  re-judged with `bench rejudge RUN --judge offline`, a second regime beside the imported one;
* a repeat-run series of 3 runs over the four vendor answer lanes against the loopback answer
  fake (Nimble's fake remembers questions between runs) plus the closed-book lane, on 30 real
  SimpleQA questions with a `vertical` column (3 verticals), as tests/qa_answer_lanes does;

then `transform.pipeline.refresh` (dlt ingest → dbt build → publish). Built once per pytest process.
"""

from __future__ import annotations

import csv
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from collectors.draco.dataset import load_draco
from collectors.qa.lane_registry import MIX_LANE_KINDS_ENV, build_lanes
from collectors.qa.offline import ExtractiveSynthesizer, NormalizedMatchGrader
from collectors.qa.question_sets import load_question_set
from collectors.qa.runner import run_qa
from collectors.qa.simpleqa import load_simpleqa
from tests.bench_cli import run_bench
from tests.fakes.answer_fake import AnswerProductsFake
from tests.shared_build import built_once
from transform.pipeline import event_log, refresh
from warehouse.paths import BenchPaths

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO / ".." / "shared" / "data"
SYSTEM = "valyu_heavy"
SERIES = "vertical-answer-products"
ANSWER_LANES = ["exa_answer", "nimble_answer", "tavily_answer", "parallel_answer"]
SERIES_LANES = [*ANSWER_LANES, "closed-book"]
VERTICALS = ["Science and technology", "Politics", "Art"]
KEYS = {
    "EXA_API_KEY": "k-exa",
    "TAVILY_API_KEY": "k-tav",
    "NIMBLE_API_KEY": "k-nim",
    "PARALLEL_API_KEY": "k-par",
}


@dataclass(frozen=True)
class ImportsSnapshot:
    home: Path
    serve_db: Path
    grading_file: Path
    inference_run: str


def bench(home: Path, *args: str) -> str:
    """A real `bench` command on `home`; its console output (rich prints to stderr)."""
    return run_bench(home, *args, env={"COLUMNS": "400"}, cwd=REPO).output  # rich: no wrapping


def _draco_imports(paths: BenchPaths, work: Path) -> str:
    sys.path.insert(0, str(REPO / "tests" / "imports"))
    from valyu_fixture import valyu_grading, valyu_inference, write_json, write_jsonl

    tasks = list(load_draco(SHARED / "draco" / "test.jsonl").tasks)
    graded = [t for d in sorted({t.domain for t in tasks}) for t in tasks if t.domain == d][:24]
    grading = write_json(
        work / f"{SYSTEM}.eval.json", valyu_grading(graded, runs=2, unmatched=False)
    )
    inference = write_jsonl(work / f"{SYSTEM}.jsonl", valyu_inference(graded[:12]))
    common = ["--format", "valyu", "--system", SYSTEM, "--no-score"]
    bench(paths.home, "import", "draco-results", str(grading), *common)
    printed = bench(paths.home, "import", "draco-results", str(inference), *common)
    (run_id,) = re.findall(r"bench rejudge (\S+) --judge offline", printed)
    bench(paths.home, "rejudge", run_id, "--judge", "offline", "--samples", "1", "--no-score")
    return run_id


def _answer_series(paths: BenchPaths, work: Path) -> None:
    simpleqa = load_simpleqa(SHARED / "simpleqa" / "simple_qa_test_set.csv")
    chosen = [q for v in VERTICALS for q in [q for q in simpleqa.questions if q.topic == v][:10]]
    path = work / "verticals.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "gold_answer", "vertical"])
        writer.writerows([q.problem, q.gold_answer, q.topic] for q in chosen)
    dataset = load_question_set(path)
    environ = {**KEYS, MIX_LANE_KINDS_ENV: "1"}  # closed-book beside the answer lanes
    with AnswerProductsFake({q.problem: q.gold_answer for q in chosen}, memory={"nimble"}) as fake:
        for _ in range(3):
            lanes = build_lanes(  # a loopback fake needs no 1 request/s pacing
                SERIES_LANES, environ=environ, base_urls=fake.base_urls(), rate_per_s=100.0
            )
            run_qa(
                event_log(paths),
                dataset,
                lanes,
                limit=None,
                synthesizer=ExtractiveSynthesizer(),
                grader=NormalizedMatchGrader(),
                series=SERIES,
            )


def build_imports_snapshot(home: Path) -> ImportsSnapshot:
    paths = BenchPaths(Path(home)).ensure()
    work = paths.home / "files"
    work.mkdir()
    inference_run = _draco_imports(paths, work)
    _answer_series(paths, work)
    refresh(paths)
    return ImportsSnapshot(paths.home, paths.serve_db, work / f"{SYSTEM}.eval.json", inference_run)


def imports_snapshot(tmp_path_factory: pytest.TempPathFactory) -> ImportsSnapshot:
    return built_once(tmp_path_factory, "imports-home", build_imports_snapshot)


def install(snapshot: ImportsSnapshot, bench_home: Path) -> Path:
    """Copy the published file into a test's BENCH_HOME (never read the build's copy)."""
    target = bench_home / "serve.duckdb"
    shutil.copyfile(snapshot.serve_db, target)
    return target
