"""`local-rag`: the offline stand-in composes a cited report from a local corpus, with no HTTP
and no provider-call events, deterministically."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from collectors.demo.extraction_corpus import build_demo_corpus, load_demo_corpus
from collectors.draco.model import RubricTask
from collectors.draco.systems import LaneConfigError, make_lane
from collectors.local_corpus import from_extraction_corpus
from tests.draco.research_support import (
    Recorder,
    assert_terminal_valid,
    draco_task,
    instruction_for,
)
from warehouse.canonical import sha256_hex
from warehouse.events import ResearchCompleted, ResearchFailed

DOCUMENTS = [
    {
        "url": "https://econ.example/bacon",
        "title": "Goodman-Bacon decomposition",
        "text": (
            "Goodman-Bacon (2021) shows that two-way fixed effects difference-in-differences with "
            "staggered adoption is a weighted average of all two-by-two comparisons. "
            "Some weights can be negative when treatment effects are heterogeneous over time. "
            "The weather in Lisbon was mild that spring."
        ),
    },
    {
        "url": "https://econ.example/callaway",
        "title": "Callaway and Sant'Anna",
        "text": (
            "Callaway and Sant'Anna propose group-time average treatment effects that are "
            "aggregated in a second stage. Their estimator relies on parallel trends conditional "
            "on covariates and allows for limited anticipation effects."
        ),
    },
    {
        "url": "https://econ.example/roth",
        "title": "Roth on pre-trend testing",
        "text": (
            "Roth (2022) argues that pre-trend testing has low power and that conditioning on "
            "passing a pre-trend test can distort difference-in-differences estimates. "
            "Sensitivity analyses bound the bias from violations of parallel trends."
        ),
    },
    {
        "url": "https://garden.example/tomatoes",
        "title": "Growing tomatoes",
        "text": "Tomatoes need warm weather, deep watering and a trellis to climb.",
    },
]


@pytest.fixture(scope="module")
def task(shared_data) -> RubricTask:
    return draco_task(shared_data)


@pytest.fixture
def corpus_file(tmp_path) -> Path:
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in DOCUMENTS) + "\n", encoding="utf-8")
    return path


def run(lane, task: RubricTask, instruction: str, recorder: Recorder):
    async def go():
        async with lane:
            return await lane.research(task, instruction, attempt=1, emit=recorder)

    return asyncio.run(go())


def test_cited_report_from_the_corpus(task, corpus_file):
    lane = make_lane("local-rag", corpus=corpus_file)
    recorder = Recorder()
    instruction = instruction_for(task)
    result = run(lane, task, instruction, recorder)

    assert isinstance(result, ResearchCompleted)
    assert_terminal_valid(result)
    assert recorder.payloads == [] and result.source_event_ids == []  # no HTTP, no calls
    assert (result.provider, result.lane) == ("offline", "local-rag")
    # nothing is billed: the event reports no cost, the research_prices seed's demo price applies
    assert (result.cost_usd, result.cost_basis) == (None, None)
    assert result.instruction_sha256 == sha256_hex(instruction.encode("utf-8"))
    assert result.wall_clock_ms > 0

    text = result.raw_output
    assert text.startswith("# Research report: I'm examining the methodological tensions")
    cited_urls = [c.url for c in result.raw_citations]
    assert set(cited_urls) == {d["url"] for d in DOCUMENTS[:3]}  # not the tomatoes
    assert len(cited_urls) == len(set(cited_urls))
    # One section per cited document, in citation order, each sentence marked with its number.
    headings = re.findall(r"^## (\d+)\. (.+)$", text, flags=re.M)
    assert headings == [(str(n), c.title) for n, c in enumerate(result.raw_citations, start=1)]
    markers = {int(m) for m in re.findall(r"\[(\d+)\]", text)}
    assert markers == set(range(1, len(cited_urls) + 1))
    # Extractive: every marked sentence is verbatim corpus text; the off-topic one is left out.
    assert "Roth (2022) argues that pre-trend testing has low power" in text
    assert "Lisbon" not in text


def test_deterministic(task, corpus_file):
    first = run(make_lane("local-rag", corpus=corpus_file), task, "x", Recorder())
    second = run(make_lane("local-rag", corpus=corpus_file), task, "x", Recorder())
    assert first.raw_output == second.raw_output
    assert first.raw_citations == second.raw_citations


def test_no_matching_document_is_empty_output(corpus_file):
    task = RubricTask(
        item_id="t-none",
        position=0,
        domain="Test",
        problem="Quantum chromodynamics lattice gluon",
        rubric_id="r",
        criteria=(),
    )
    result = run(make_lane("local-rag", corpus=corpus_file), task, "x", Recorder())
    assert isinstance(result, ResearchFailed)
    assert (result.stage, result.error_class) == ("result", "empty_output")
    assert_terminal_valid(result)


def test_over_the_offline_demo_corpus(tmp_path):
    corpus = from_extraction_corpus(load_demo_corpus(build_demo_corpus(tmp_path / "demo")))
    task = RubricTask(
        item_id="t-demo",
        position=0,
        domain="Technology",
        problem="How does Python evaluate a lambda expression, and what can its body contain?",
        rubric_id="r",
        criteria=(),
    )
    result = run(make_lane("local-rag", corpus=corpus), task, "x", Recorder())
    assert isinstance(result, ResearchCompleted)
    assert result.raw_citations
    assert all(c.url.startswith("https://pyref-daily.example/") for c in result.raw_citations)
    assert "lambda" in result.raw_output.lower()


def test_system_ref_says_offline_stand_in(corpus_file):
    ref = make_lane("local-rag", corpus=corpus_file).system_ref()
    assert ref.name == "local-rag"
    assert ref.settings["provider"] == "offline" and ref.settings["offline_stand_in"] is True
    assert "not a vendor" in ref.settings["note"]
    assert ref.settings["corpus"]["sha256"] == sha256_hex(corpus_file.read_bytes())


def test_needs_a_corpus():
    with pytest.raises(LaneConfigError, match="local corpus"):
        make_lane("local-rag")


def test_depths_differ_only_in_their_parameters_and_the_control_retrieves_nothing(
    task, corpus_file
):
    from collectors.draco.systems import LANES, price_for
    from collectors.draco.systems.local_rag import CLOSED_BOOK, VARIANTS

    documents = {}
    for name, (passages_k, documents_k, sentences) in VARIANTS.items():
        lane = make_lane(name, corpus=corpus_file)
        assert (lane.lane, lane.passages_k, lane.documents_k) == (name, passages_k, documents_k)
        assert lane.sentences_per_document == sentences
        result = run(lane, task, instruction_for(task), Recorder())
        assert result.lane == name and result.cost_usd is None
        documents[name] = len(result.raw_citations)
        assert len(result.raw_citations) <= documents_k
    assert documents["local-rag-shallow"] < documents["local-rag-deep"]
    control = make_lane(CLOSED_BOOK)
    result = run(control, task, instruction_for(task), Recorder())
    assert isinstance(result, ResearchCompleted) and result.raw_citations == []
    assert " ".join(task.problem.split()) in result.raw_output
    # every offline system is priced with a labelled demo price, never a vendor's list price
    for name in (*VARIANTS, CLOSED_BOOK):
        usd, basis, _ = price_for(name)
        assert usd is not None and usd > 0 and basis == "demo price", name
        assert LANES[name].provider == "offline"
