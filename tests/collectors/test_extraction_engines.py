"""Every registered engine extracts text from a real page, offline, with recorded settings."""

from __future__ import annotations

import importlib.metadata
import json
import socket

import pytest

from collectors.extraction.engines import (
    ENGINES,
    REFERENCE_ENGINES,
    Engine,
    EngineUnavailable,
    get_engine,
)


@pytest.fixture
def network_attempts(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """Record (and refuse) every DNS lookup or connect: engines must never touch the network.

    Refusing alone is not enough: some libraries swallow connection errors silently."""
    attempts: list[tuple] = []

    def refuse(*args, **kwargs):
        attempts.append(args[:2])
        raise OSError("network disabled in tests")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", lambda self, *a: refuse(*a))
    return attempts


def test_registry_is_explicit_and_consistent():
    assert set(REFERENCE_ENGINES) <= set(ENGINES)
    assert {
        "trafilatura",
        "readability-lxml",
        "html-text",
        "inscriptis",
        "html2text",
        "justext",
        "beautifulsoup",
    } <= set(ENGINES)
    for name, engine in ENGINES.items():
        assert engine.name == name


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_engine_extracts_text_from_a_real_page(name, article_benchmark, network_attempts):
    engine = get_engine(name)
    item = article_benchmark.items[0]  # an English news article
    text = engine.extract(item.read_html().html, item.url)
    assert isinstance(text, str) and len(text.split()) > 50
    # Every engine finds at least the article's opening words somewhere in its output.
    opening = " ".join(item.truth_text.split()[:4])
    assert opening in " ".join(text.split())
    assert network_attempts == []


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_engine_version_and_settings_are_recordable(name):
    engine = ENGINES[name]
    assert engine.version == importlib.metadata.version(engine.distribution)
    system = engine.system_ref()
    assert system.name == name and system.version == engine.version
    assert json.loads(json.dumps(system.settings)) == dict(engine.settings)


def test_reference_engine_calls_match_upstream():
    assert ENGINES["trafilatura"].settings["call"] == (
        "trafilatura.extract(html, include_comments=False)"
    )
    assert ENGINES["readability-lxml"].settings["call"] == (
        "html_text.extract_text(Document(html).summary(html_partial=True))"
    )
    assert ENGINES["html-text"].settings["call"] == "html_text.extract_text(html)"


def test_unknown_engine_lists_the_known_ones():
    with pytest.raises(
        ValueError, match=r"unknown extraction engine 'nope'; known engines: .*trafilatura"
    ):
        get_engine("nope")


def test_missing_library_is_reported_before_use():
    def build():
        import not_a_real_extractor_module  # noqa: F401

    ghost = Engine(name="ghost", distribution="not-a-real-distribution", settings={}, build=build)
    with pytest.raises(EngineUnavailable, match="not-a-real-distribution"):
        _ = ghost.version
    with pytest.raises(EngineUnavailable, match="ghost"):
        ghost.load()


def test_non_string_output_is_an_error():
    engine = Engine(
        name="bytes", distribution="pydantic", settings={}, build=lambda: lambda html, url: b"x"
    )
    with pytest.raises(TypeError, match="returned bytes"):
        engine.extract("<p>x</p>")
