"""The SQL tokeniser (RE2 class in macros/word_tokens.sql) equals upstream's Python `\\w+`."""

from __future__ import annotations

import re
import sys
import unicodedata

import duckdb
import pytest
from dbt_harness import DBT_PROJECT
from extraction_cases import load_ground_truth

MACRO = DBT_PROJECT / "macros" / "word_tokens.sql"


def sql_word_pattern() -> str:
    body = re.search(
        r"macro word_token_pattern\(\)\s*-?%\}(.*?)\{%-?\s*endmacro", MACRO.read_text(), re.S
    )
    assert body, f"word_token_pattern macro not found in {MACRO}"
    return body.group(1).strip()


@pytest.fixture(scope="module")
def con():
    with duckdb.connect() as connection:
        yield connection


def sql_tokens(con, text: str, pattern: str) -> list[str]:
    return con.execute("select regexp_extract_all(?, ?)", [text, pattern]).fetchone()[0]


def test_sql_tokens_equal_python_on_all_181_ground_truth_texts(con):
    pattern = sql_word_pattern()
    truth = load_ground_truth()
    assert len(truth) == 181
    mismatches = []
    for item_id, record in truth.items():
        text = record["articleBody"]
        if sql_tokens(con, text, pattern) != re.findall(r"\w+", text):
            mismatches.append(item_id)
    assert mismatches == []


def test_sql_word_class_equals_python_on_every_assigned_code_point(con):
    """Both sides agree on every code point Python's Unicode database knows (Unicode 14 on 3.11).

    RE2 may know newer letters; those are unassigned (Cn) for Python, and no other difference is
    allowed."""
    pattern = sql_word_pattern()
    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    text = " ".join(chars)
    python_word = set("".join(re.findall(r"\w+", text)))
    sql_word = set("".join(sql_tokens(con, text, pattern)))
    assert python_word - sql_word == set()
    assert {unicodedata.category(c) for c in sql_word - python_word} <= {"Cn"}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "snake_case-42 (x_1)",
        "nai\u0308ve",
        "東京２０２４年",
        "l'été ½ ² Ⅻ",
        "emoji 🙂 tokens",
        "tab\there\nnewline",
    ],
)
def test_sql_tokens_equal_python_on_edge_texts(con, text):
    assert sql_tokens(con, text, sql_word_pattern()) == re.findall(r"\w+", text)
