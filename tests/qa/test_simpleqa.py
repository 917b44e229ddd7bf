"""The pinned SimpleQA file: parsing facts, the upstream sampler, refusal of drifted copies."""

from __future__ import annotations

import csv
import io
import random
from collections import Counter

import httpx
import pytest

from collectors.qa import simpleqa as sqa
from collectors.qa.dataset import DatasetError, question_item_id, sample_positions, select_questions
from warehouse.canonical import sha256_hex

FIRST_TEN = [3155, 3445, 331, 2121, 4188, 3980, 3317, 2484, 3904, 2933]


def test_real_file_facts(simpleqa, simpleqa_csv):
    assert simpleqa.dataset.sha256 == sqa.SHA256 == sha256_hex(simpleqa_csv.read_bytes())
    assert simpleqa.benchmark == "simpleqa"
    assert simpleqa.dataset.item_count == len(simpleqa.questions) == 4_326
    assert Counter(q.answer_type for q in simpleqa.questions) == {
        "Date": 1418,
        "Person": 1041,
        "Other": 777,
        "Number": 663,
        "Place": 427,
    }
    assert len({q.topic for q in simpleqa.questions}) == 10
    assert len({q.problem for q in simpleqa.questions}) == 4_326
    first = simpleqa.questions[0]
    assert first.problem == "Who received the IEEE Frank Rosenblatt Award in 2010?"
    assert first.gold_answer == "Michio Sugeno"
    assert (
        first.item_id == question_item_id(0, first.problem) == f"0-{sha256_hex(first.problem)[:16]}"
    )
    assert len({q.item_id for q in simpleqa.questions}) == 4_326


def test_embedded_newlines_answers_and_raw_urls(simpleqa, simpleqa_csv):
    rows = list(csv.reader(io.StringIO(simpleqa_csv.read_text(encoding="utf-8"), newline="")))[1:]
    assert sum(1 for row in rows if any("\n" in field for field in row)) == 6
    # 211 answers carried whitespace: stripped on load, never otherwise changed.
    assert sum(1 for row in rows if row[2] != row[2].strip()) == 211
    assert all(
        q.gold_answer == row[2].strip() for q, row in zip(simpleqa.questions, rows, strict=True)
    )
    # Gold URLs kept exactly as written, newline-joined pairs included (upstream quirk).
    assert sum(1 for q in simpleqa.questions for url in q.gold_urls_raw if "\n" in url) == 150
    assert all(2 <= len(q.gold_urls_raw) <= 7 for q in simpleqa.questions)


def test_sampler_matches_simple_evals(simpleqa):
    selected = select_questions(simpleqa, 500, 0)
    assert [s.question.row_position for s in selected[:10]] == FIRST_TEN
    assert [s.sample_order for s in selected[:3]] == [0, 1, 2]
    # Exactly upstream's call on the list of rows, not only on positions.
    rows = list(simpleqa.questions)
    assert [q.item_id for q in random.Random(0).sample(rows, 500)] == [
        s.question.item_id for s in selected
    ]


def test_prefix_property():
    n5, n500, n1000 = (sample_positions(4_326, n, 0) for n in (5, 500, 1_000))
    assert n5 == n500[:5] and n500 == n1000[:500]
    assert sample_positions(4_326, 500, 1) != n500


def test_no_limit_keeps_file_order_and_bad_limits_are_refused():
    assert sample_positions(7, None, 0) == list(range(7))
    with pytest.raises(ValueError, match="positive"):
        sample_positions(7, 0, 0)
    with pytest.raises(ValueError, match="more than the 7"):
        sample_positions(7, 8, 0)


def test_drifted_copy_is_refused_naming_the_file(simpleqa_csv, tmp_path):
    copy = tmp_path / "simple_qa_test_set.csv"
    data = simpleqa_csv.read_bytes()
    copy.write_bytes(data.replace(b"Michio Sugeno", b"Michio Sugeno ", 1))
    with pytest.raises(DatasetError) as err:
        sqa.load_simpleqa(copy)
    assert str(copy) in str(err.value) and "pinned" in str(err.value)
    assert "user question set" in str(err.value)


def test_any_identical_local_copy_is_accepted(simpleqa_csv, tmp_path):
    copy = tmp_path / "elsewhere.csv"
    copy.write_bytes(simpleqa_csv.read_bytes())
    dataset = sqa.load_simpleqa(copy)
    assert dataset.dataset.sha256 == sqa.SHA256 and dataset.path == copy


def test_missing_file_is_named(tmp_path):
    with pytest.raises(DatasetError, match="not found"):
        sqa.load_simpleqa(tmp_path / "nope.csv")


def test_download_into_cache_is_verified(simpleqa_csv, tmp_path):
    good = simpleqa_csv.read_bytes()
    served: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        served.append(str(request.url))
        return httpx.Response(200, content=good)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    dataset = sqa.load_simpleqa(cache_dir=tmp_path, client=client)
    assert served == [sqa.SOURCE_URL]
    assert sqa.cached_path(tmp_path).read_bytes() == good
    assert dataset.dataset.uri == sqa.SOURCE_URL
    sqa.load_simpleqa(cache_dir=tmp_path, client=client)  # cached: no second download
    assert len(served) == 1


def test_download_with_other_bytes_writes_nothing(tmp_path):
    client = httpx.Client(
        transport=httpx.MockTransport(
            lambda r: httpx.Response(200, content=b"metadata,problem,answer\n")
        )
    )
    with pytest.raises(DatasetError, match="does not match the pinned"):
        sqa.load_simpleqa(cache_dir=tmp_path, client=client)
    assert not sqa.cached_path(tmp_path).exists()
    assert not any(tmp_path.rglob("*.csv*"))
