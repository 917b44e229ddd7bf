"""The v1 URL normaliser of int_qa_urls_normalized (methodology 2.4), loaded from the model file."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

MODEL = (
    Path(__file__).resolve().parents[2]
    / "dbt_project/models/intermediate/qa/int_qa_urls_normalized.py"
)
spec = importlib.util.spec_from_file_location("int_qa_urls_normalized", MODEL)
normalizer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(normalizer)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://www.Example.com:443/a/./b/../c/?q=1#f", "https://example.com/a/c"),
        ("HTTP://EXAMPLE.com:80/", "http://example.com"),
        ("http://example.com:8080/x/", "http://example.com:8080/x"),
        ("https://bücher.de/%7euser/%2f/x y", "https://xn--bcher-kva.de/~user/%2F/x%20y"),
        ("https://en.wikipedia.org/wiki/Caf%c3%a9", "https://en.wikipedia.org/wiki/Caf%C3%A9"),
        ("https://en.wikipedia.org/wiki/Café", "https://en.wikipedia.org/wiki/Caf%C3%A9"),
        ("https://en.m.wikipedia.org/wiki/X", "https://en.m.wikipedia.org/wiki/X"),  # not folded
        ("https://example.org/page?id=3", "https://example.org/page"),  # query dropped
        ("ftp://example.org/a", ""),
        ("Wikipedia", ""),
        ("https://a.com:99999/x", ""),
        ("", ""),
    ],
)
def test_normalize_url(raw, expected):
    assert normalizer.normalize_url(raw) == expected


def test_http_and_https_stay_distinct():
    assert normalizer.normalize_url("http://a.org/x") != normalizer.normalize_url("https://a.org/x")


def test_gold_tokens_split_on_whitespace_and_labels_are_not_urls():
    raw = ["https://a.org/x\nhttps://b.org/y", "Source: https://c.org/z (archived)"]
    tokens = normalizer.gold_tokens(raw)
    urls = [t for t in tokens if normalizer.parse_http(t) is not None]
    assert urls == ["https://a.org/x", "https://b.org/y", "https://c.org/z"]
