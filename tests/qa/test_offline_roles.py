"""Offline stand-ins (labelled "offline"), the UMBRELA parser, passages and the BM25 lane."""

from __future__ import annotations

import asyncio
import json

import pytest

from collectors.lexical import normalize
from collectors.local_corpus import LocalCorpusError, from_documents_jsonl, split_passages
from collectors.qa.lanes import ClosedBookLane, LocalBm25Lane
from collectors.qa.offline import (
    DONT_KNOW,
    ExtractiveSynthesizer,
    LexicalRelevanceJudge,
    NormalizedMatchGrader,
)
from collectors.qa.roles import parse_relevance
from warehouse.events import Chunk


def chunk(rank: int, text: str, title: str = "t") -> Chunk:
    return Chunk(rank=rank, url=f"https://x.example/{rank}", title=title, text=text)


def test_extractive_synthesizer_picks_the_best_overlapping_sentence():
    chunks = [
        chunk(1, "Cats are small. The Eiffel Tower is in Paris."),
        chunk(2, "The Eiffel Tower, a wrought-iron tower, stands in Paris, France."),
    ]
    result = ExtractiveSynthesizer().synthesize(
        "Where in France does the Eiffel Tower stand?", chunks
    )
    assert result.answer == "The Eiffel Tower, a wrought-iron tower, stands in Paris, France."
    assert result.outcome == "answered" and result.chunk_ranks_used == [1, 2]
    assert result.llm.provider == "offline" and result.llm.model == "offline-extractive@1"
    assert result.llm.raw_completion == result.answer and len(result.llm.prompt_sha256) == 64


def test_extractive_synthesizer_says_dont_know_without_context_or_overlap():
    synth = ExtractiveSynthesizer()
    assert synth.synthesize("Who won?", []).answer == DONT_KNOW
    assert (
        synth.synthesize("Who won the 1998 cup?", [chunk(1, "Unrelated text about cats.")]).answer
        == DONT_KNOW
    )


@pytest.mark.parametrize(
    ("answer", "gold", "grade"),
    [
        ("It was Michio Sugeno, in 2010.", "Michio Sugeno", "A"),
        ("michio  SUGENO", "Michio Sugeno", "A"),
        ("1,000", "1000", "A"),
        ("Someone else", "Michio Sugeno", "B"),
        ("I don't know", "Michio Sugeno", "C"),
        ("I do not know.", "x", "C"),
        ("", "Michio Sugeno", "C"),
    ],
)
def test_normalized_match_grader(answer, gold, grade):
    grader = NormalizedMatchGrader()
    verdict = grader.grade("q", gold, answer)
    assert verdict.grade == grade and verdict.parse_ok
    assert grader.official is False and grader.grader_id == "offline-normalized-match@1"
    assert verdict.llm.provider == "offline"


def test_normalize_folds_case_and_punctuation():
    assert normalize("  Ünïcode—Dash, “Quotes”! ") == "ünïcodedash quotes"


def test_lexical_judge_grades_by_query_coverage():
    judge = LexicalRelevanceJudge()
    query = "When was the Eiffel Tower completed?"
    assert judge.judge(query, chunk(1, "The Eiffel Tower was completed in 1889.")).grade == 3
    assert judge.judge(query, chunk(1, "Paris has a tower.")).grade == 1
    assert judge.judge(query, chunk(1, "Nothing related.")).grade == 0
    assert judge.judge_id == "offline-lexical-relevance@1"


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("Reasoning...\nFinal score: 3", (3, True)),
        ("final score = 1", (1, True)),
        ("Final score: **2**", (2, True)),
        ("I think 2 fits. Final score: 1", (1, True)),
        ("Grade 2", (2, True)),
        ("Scores 12 and 4.5 only", (0, False)),
        ("", (0, False)),
    ],
)
def test_parse_relevance(completion, expected):
    assert parse_relevance(completion) == expected


def test_split_passages_packs_paragraphs_and_cuts_long_ones():
    text = "First para.\n\nSecond para.\n\n" + "Long sentence. " * 200
    passages = split_passages(text, max_chars=300)
    assert passages[0] == "First para.\n\nSecond para."
    assert passages[1].startswith("Long sentence. Long sentence.")
    assert all(len(p) <= 300 for p in passages)
    assert split_passages("x" * 700, max_chars=300) == ["x" * 300, "x" * 300, "x" * 100]


def test_documents_jsonl_corpus_and_errors(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(
        json.dumps({"url": "https://d.example/a", "title": "A", "text": "Alpha beta."}) + "\n"
    )
    corpus = from_documents_jsonl(path)
    assert corpus.dataset.item_count == 1 and corpus.passages[0].title == "A"
    path.write_text('{"url": "https://d.example/a"}\n')
    with pytest.raises(LocalCorpusError, match=r"docs.jsonl: line 1: field 'text'"):
        from_documents_jsonl(path)


def test_local_bm25_lane_records_a_call_and_normalizes_from_it(demo_passages):
    lane = LocalBm25Lane(demo_passages)
    call = asyncio.run(lane.search("What does the assert statement raise?", item_id="i", attempt=1))
    assert call.provider == "local" and call.stage == "search" and call.status_code == 200
    assert call.request.body == {"query": "What does the assert statement raise?", "k": 10}
    assert call.request.url.startswith("local-bm25://demo-pydoc-topics@")
    chunks = lane.normalize(call)
    assert 1 <= len(chunks) <= 10 and [c.rank for c in chunks] == list(range(1, len(chunks) + 1))
    assert chunks[0].url == "https://pyref-daily.example/reference/assert"
    assert lane.system_ref().settings["corpus"]["sha256"] == demo_passages.dataset.sha256
    stopwords_only = asyncio.run(lane.search("the of and", item_id="i", attempt=1))
    assert lane.normalize(stopwords_only) == []
    # the same query as the one call-result type: the chunks, the stored call, no cost
    result = asyncio.run(lane.call("What does the assert statement raise?", item_id="i", attempt=1))
    assert result.value == chunks and result.request == call.request and result.cost_usd == 0.0


def test_closed_book_lane_never_searches():
    lane = ClosedBookLane()
    assert lane.needs_search is False and lane.price_per_1k_usd is None
    with pytest.raises(RuntimeError):
        asyncio.run(lane.search("q", item_id="i", attempt=1))
