"""Fixtures for the extraction collector tests: the real benchmark copy and the demo corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.demo.extraction_corpus import build_demo_corpus, load_demo_corpus
from collectors.extraction.corpus import Corpus, load_corpus
from warehouse.log import EventLog


@pytest.fixture(scope="session")
def article_benchmark_dir(shared_data: Path) -> Path:
    """The stored upstream copy: shared/data beside the repository (tests/conftest.py)."""
    return shared_data / "article-extraction-benchmark"


@pytest.fixture(scope="session")
def article_benchmark(article_benchmark_dir: Path) -> Corpus:
    return load_corpus(article_benchmark_dir)


@pytest.fixture(scope="session")
def demo_corpus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_corpus(tmp_path_factory.mktemp("demo") / "corpus")


@pytest.fixture(scope="session")
def demo_corpus(demo_corpus_dir: Path) -> Corpus:
    return load_demo_corpus(demo_corpus_dir)


@pytest.fixture
def event_log(tmp_path: Path) -> EventLog:
    return EventLog(tmp_path / "log")


@pytest.fixture
def events_of():
    """events_of(log, event_type=None) -> the log's events (upcast dicts), optionally filtered."""

    def read(log: EventLog, event_type: str | None = None) -> list[dict]:
        return [
            event
            for _raw, event in log.read()
            if event_type is None or event["event_type"] == event_type
        ]

    return read
