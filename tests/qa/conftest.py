"""Fixtures for the QA collector tests: the real SimpleQA file, the demo corpus as passages,
a loopback fake LLM server, an event log."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from collectors.demo.extraction_corpus import build_demo_corpus, load_demo_corpus
from collectors.local_corpus import PassageCorpus, from_extraction_corpus
from collectors.qa.dataset import QaDataset
from collectors.qa.question_sets import DEMO_QUESTION_SET
from collectors.qa.simpleqa import load_simpleqa
from tests.qa.llm_fake import FakeLlmServer
from warehouse.log import EventLog

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_QUESTIONS = DEMO_QUESTION_SET

# Every stage event the QA runner writes, and whether it ends its stage.
STAGE_EVENT_TYPES = (
    "provider_call_completed",
    "provider_call_failed",
    "chunks_normalized",
    "answer_synthesized",
    "answer_graded",
    "relevance_graded",
)


@pytest.fixture(scope="session")
def simpleqa_csv(shared_data: Path) -> Path:
    return shared_data / "simpleqa" / "simple_qa_test_set.csv"


@pytest.fixture(scope="session")
def simpleqa(simpleqa_csv: Path) -> QaDataset:
    return load_simpleqa(simpleqa_csv)


@pytest.fixture(scope="session")
def demo_corpus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_corpus(tmp_path_factory.mktemp("qa-demo") / "corpus")


@pytest.fixture(scope="session")
def demo_passages(demo_corpus_dir: Path) -> PassageCorpus:
    return from_extraction_corpus(load_demo_corpus(demo_corpus_dir))


@pytest.fixture
def event_log(tmp_path: Path) -> EventLog:
    return EventLog(tmp_path / "log")


@pytest.fixture
def fake_llm():
    with FakeLlmServer() as server:
        yield server


def events(log: EventLog, event_type: str | None = None) -> list[dict]:
    return [e for _raw, e in log.read() if event_type is None or e["event_type"] == event_type]


def stage_of(event: dict) -> tuple:
    """(item, lane, attempt, stage) that a stage event ends."""
    p = event["payload"]
    kind = event["event_type"]
    if kind in ("provider_call_completed", "provider_call_failed"):
        stage = p["stage"]
        if stage == "normalize":
            stage = "chunks"
        elif stage == "synthesize":
            stage = "synthesize-call"  # the failed LLM call; answer_synthesized ends the stage
        elif stage.startswith("relevance:"):
            stage = f"relevance#{stage.split(':')[1]}"
    elif kind == "chunks_normalized":
        stage = "chunks"
    elif kind == "answer_synthesized":
        stage = "synthesize"
    elif kind == "answer_graded":
        stage = "grade"
    else:
        stage = f"relevance#{p['rank']}"
    return (p["item_id"], p["lane"], p["attempt"], stage)


def stage_counts(log: EventLog) -> Counter:
    return Counter(stage_of(e) for e in events(log) if e["event_type"] in STAGE_EVENT_TYPES)
