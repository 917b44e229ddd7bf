"""User question sets: CSV and JSONL, pinned by sha256, errors that name file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors.qa.dataset import DatasetError, question_item_id
from collectors.qa.question_sets import load_question_set
from warehouse.canonical import sha256_hex


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(path: Path, *records: object) -> Path:
    return write(path, "".join(json.dumps(r) + "\n" for r in records))


def test_csv_question_set(tmp_path):
    path = write(
        tmp_path / "mine.csv",
        "question,gold_answer,gold_urls,topic\n"
        'Who wrote it?, Ada ,"https://a.example/x\nhttps://b.example/y",history\n'
        "\n"
        "Where is it?,Paris,,\n",
    )
    dataset = load_question_set(path)
    assert dataset.benchmark == "qa"
    assert dataset.dataset.sha256 == sha256_hex(path.read_bytes())
    assert dataset.dataset.name == "mine" and dataset.dataset.item_count == 2
    first, second = dataset.questions
    assert first.gold_answer == "Ada" and first.topic == "history"
    assert first.gold_urls_raw == ("https://a.example/x", "https://b.example/y")
    assert first.item_id == question_item_id(0, "Who wrote it?")
    assert second.gold_urls_raw == () and second.topic is None and second.row_position == 1


def test_jsonl_question_set_urls_as_list_or_text(tmp_path):
    path = jsonl(
        tmp_path / "mine.jsonl",
        {"question": "Q1?", "gold_answer": "A1", "gold_urls": ["https://a.example/1"]},
        {
            "question": "Q2?",
            "gold_answer": "A2",
            "gold_urls": "https://a.example/2 https://a.example/3",
        },
    )
    dataset = load_question_set(path)
    assert [q.gold_urls_raw for q in dataset.questions] == [
        ("https://a.example/1",),
        ("https://a.example/2", "https://a.example/3"),
    ]


def test_editing_the_file_changes_the_pin(tmp_path):
    path = jsonl(tmp_path / "s.jsonl", {"question": "Q?", "gold_answer": "A"})
    before = load_question_set(path).dataset.sha256
    jsonl(path, {"question": "Q?", "gold_answer": "B"})
    assert load_question_set(path).dataset.sha256 != before


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("a.csv", "question,answer\nQ?,A\n", r"line 1: unknown field\(s\) 'answer'"),
        ("a.csv", "question\nQ?\n", r"line 1: field\(s\) 'gold_answer' missing"),
        ("a.csv", "question,gold_answer\nQ?,A\n  ,B\n", r"line 3: field 'question' is empty"),
        ("a.csv", "question,gold_answer\nQ?,A,extra\n", r"line 2: more values"),
        (
            "a.csv",
            "question,gold_answer\nQ?,A\nQ?,B\n",
            r"line 3: field 'question' repeats the question on line 2",
        ),
        (
            "a.jsonl",
            '{"question": "Q?", "gold_answer": "A"}\n{"question": "Q2?"\n',
            r"line 2: not valid JSON",
        ),
        ("a.jsonl", '["Q?", "A"]\n', r"line 1: expected a JSON object"),
        (
            "a.jsonl",
            '{"question": "Q?", "gold_answer": 42}\n',
            r"line 1: field 'gold_answer' must be text, got int",
        ),
        (
            "a.jsonl",
            '{"question": "Q?", "gold_answer": "A", "gold_urls": [1]}\n',
            r"line 1: field 'gold_urls' must be",
        ),
        ("a.jsonl", '\n\n{"gold_answer": "A"}\n', r"line 3: field\(s\) 'question' missing"),
        ("a.jsonl", "\n", r"has no questions"),
        ("a.txt", "question,gold_answer\n", r"unknown question-set format '.txt'"),
        ("a.csv", 'metadata,problem,answer\n"{}",Q?,A\n', r"SimpleQA columns"),
    ],
)
def test_errors_name_file_line_and_field(tmp_path, name, text, expected):
    path = write(tmp_path / name, text)
    with pytest.raises(DatasetError, match=expected) as err:
        load_question_set(path)
    assert str(path) in str(err.value)


def test_not_utf8_and_missing_file(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"question,gold_answer\n\xff,A\n")
    with pytest.raises(DatasetError, match=r"bad.csv: not UTF-8 \(byte 21\)"):
        load_question_set(bad)
    with pytest.raises(DatasetError, match="not found"):
        load_question_set(tmp_path / "missing.jsonl")


def test_the_official_file_is_not_a_user_set(simpleqa_csv, tmp_path):
    copy = tmp_path / "copy.csv"
    copy.write_bytes(simpleqa_csv.read_bytes())
    with pytest.raises(DatasetError, match="official SimpleQA test set"):
        load_question_set(copy)


def test_demo_question_set_loads():
    from tests.qa.conftest import DEMO_QUESTIONS

    dataset = load_question_set(DEMO_QUESTIONS)
    assert dataset.dataset.item_count == 10
    assert all(q.gold_urls_raw for q in dataset.questions)
