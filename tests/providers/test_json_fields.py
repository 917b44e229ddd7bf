"""The one set of vendor-JSON readers (collectors/http/json_fields.py) keeps the rules each family
relied on when it had its own copy: lenient everywhere, ids may be integers only where the
research modules read them, strings stripped only where the search normalisers stripped them."""

from __future__ import annotations

from collectors.http.json_fields import (
    at,
    first_nonempty_string,
    first_text,
    for_url,
    int_or_none,
    number,
    object_or_empty,
    objects,
    objects_at,
    string,
    strings,
    text_or_none,
)


def test_paths_and_lists_never_raise_on_an_unexpected_shape():
    doc = {"a": {"b": [{"x": 1}, "junk", None, {"y": 2}]}, "s": "text"}
    assert at(doc, "a", "b", "c") is None and at(doc, "s", "deeper") is None
    assert at(doc) is doc
    assert objects_at(doc, "a", "b") == [{"x": 1}, {"y": 2}]
    assert objects_at(doc, "s") == [] and objects("not a list") == []
    assert object_or_empty([1]) == {} and object_or_empty(doc) is doc


def test_ids_are_integers_as_text_for_research_documents_only():
    doc = {"empty": "", "n": 42, "flag": True, "id": "run_1"}
    assert first_text(doc, "empty", "flag", "n", "id") == "42"
    assert first_nonempty_string(doc, "empty", "flag", "n", "id") == "run_1"
    assert first_text("not an object", "id") is None
    assert first_nonempty_string(doc, "missing") is None


def test_text_is_stripped_for_chunks_and_kept_as_sent_for_extractions():
    assert string("  a  ") == "a" and string(3) == ""
    assert strings([" a ", "", 3, "b"]) == ["a", "b"] and strings("a") == []
    assert text_or_none("  a  ") == "  a  " and text_or_none("   ") is None


def test_numbers_refuse_booleans():
    assert number(True) is None and number(2) == 2.0 and number("2") is None
    assert int_or_none(False) is None and int_or_none(3.9) == 3 and int_or_none("3") is None


def test_for_url_falls_back_to_the_only_entry_of_a_one_url_batch():
    entries = [{"url": "https://a/"}, {"url": "https://b/"}]
    assert for_url(entries, "https://b/") == {"url": "https://b/"}
    assert for_url(entries, "https://c/") is None
    assert for_url([{"id": "https://c/?x"}], "https://c/", key="id") == {"id": "https://c/?x"}
