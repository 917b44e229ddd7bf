"""One serving snapshot of every family, built from REAL events by the real pipeline.

`build_real_snapshot(home)` runs, offline, what `bench demo` runs (smaller where it can be):

* extraction: four local engines on the 30-page demo corpus — trafilatura and resiliparse
  (main content only) and inscriptis and html-text (keep the boilerplate), so the seed
  composite and shingle F1 disagree as they do in the demo;
* question answering: the demo question set on the local-bm25 and closed-book lanes;
* deep research: the six demo rubric tasks on local-rag with the offline judge, then a rejudge
  with `FlakyJudge` (tests/app/fixture_draco_snapshot.py), whose flipped samples MET some
  penalties, so a penalty floor changes scores;

then `transform.pipeline.refresh` (dlt ingest → dbt build → publish). The warehouse stays beside
the snapshot so tests can rescore a copy with dbt. Built once per pytest process.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench import draco_cli, qa_cli
from bench.corpora import resolve_corpus
from collectors.draco.normalize import NORMALIZER
from collectors.draco.runner import rejudge
from collectors.extraction.runner import run_extraction
from tests.shared_build import built_once
from transform.pipeline import event_log, refresh
from warehouse.paths import BenchPaths

ENGINES = ("html-text", "inscriptis", "resiliparse", "trafilatura")


@dataclass(frozen=True)
class RealSnapshot:
    home: Path
    serve_db: Path
    warehouse_db: Path
    extraction_run: str
    draco_run: str


def build_real_snapshot(home: Path) -> RealSnapshot:
    from fixture_draco_snapshot import FlakyJudge

    paths = BenchPaths(Path(home)).ensure()
    corpus = resolve_corpus("demo", paths)
    extraction = run_extraction(event_log(paths), corpus, list(ENGINES), argv=["fixture"])
    qa_cli.run_demo(paths)
    draco = draco_cli.run_rubric(
        paths, tasks="demo", systems="local-rag", judge="offline", samples=1, preflight=False
    )
    rejudge(event_log(paths), draco.run_id, FlakyJudge(), NORMALIZER, argv=["fixture"])
    refresh(paths)
    return RealSnapshot(
        paths.home, paths.serve_db, paths.warehouse_db, extraction.run_id, draco.run_id
    )


def real_snapshot(tmp_path_factory: pytest.TempPathFactory) -> RealSnapshot:
    return built_once(tmp_path_factory, "real-home", build_real_snapshot)


def install(snapshot: RealSnapshot, bench_home: Path) -> Path:
    """Copy the published file into a test's BENCH_HOME (never read the build's copy)."""
    target = bench_home / "serve.duckdb"
    shutil.copyfile(snapshot.serve_db, target)
    return target
