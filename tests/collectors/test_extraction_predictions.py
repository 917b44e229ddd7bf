"""Importing upstream-format prediction files: validation first, then events, never half."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from collectors.extraction.predictions import (
    MISSING_PREDICTION,
    PredictionsError,
    import_predictions,
)
from warehouse.canonical import sha256_hex
from warehouse.events import PAYLOAD_MODELS, parse_payload


def write(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.fixture
def wrapped_file(tmp_path: Path, demo_corpus) -> Path:
    """Wrapped layout; the first item predicts null, the last item has no entry."""
    items = demo_corpus.items
    output = {item.item_id: {"articleBody": item.truth_text} for item in items[1:-1]}
    output[items[0].item_id] = {"articleBody": None}
    return write(tmp_path / "mysystem.json", {"version": "1.2.3", "output": output})


def test_wrapped_file_becomes_a_run_of_import_events(
    wrapped_file, demo_corpus, event_log, events_of
):
    summary = import_predictions(event_log, wrapped_file, "mysystem", None, demo_corpus)
    n = len(demo_corpus.items)
    assert (summary.planned, summary.completed, summary.failed) == (n, n - 1, 1)
    assert not summary.already_finished

    events = events_of(event_log)
    assert Counter(e["event_type"] for e in events) == {
        "run_started": 1,
        "item_registered": n,
        "extraction_completed": n - 1,
        "extraction_failed": 1,
        "run_finished": 1,
    }
    for event in events:
        model = parse_payload(event["event_type"], event["payload"])
        assert event["schema_version"] == PAYLOAD_MODELS[event["event_type"]].schema_version
        assert model.model_dump(mode="json") == event["payload"]

    file_sha256 = sha256_hex(wrapped_file.read_bytes())
    (started,) = events_of(event_log, "run_started")
    assert started["payload"]["source"] == "import"
    assert started["payload"]["spec"]["file_sha256"] == file_sha256
    assert started["payload"]["systems"] == [
        {
            "name": "mysystem",
            "version": "1.2.3",
            "settings": {
                "file": "mysystem.json",
                "file_sha256": file_sha256,
                "file_version": "1.2.3",
            },
        }
    ]

    completed = {
        e["payload"]["item_id"]: e["payload"] for e in events_of(event_log, "extraction_completed")
    }
    null_one = completed[demo_corpus.items[0].item_id]
    assert null_one["output_text"] is None and null_one["output_bytes"] == 0
    some = completed[demo_corpus.items[1].item_id]
    assert some["output_text"] == demo_corpus.items[1].truth_text
    assert some["output_bytes"] == len(some["output_text"].encode("utf-8"))
    assert some["source"] == "import"
    assert (
        some["latency_ms"] is None and some["render_path"] is None and some["input_sha256"] is None
    )
    assert some["settings"]["file_sha256"] == file_sha256

    (missing,) = events_of(event_log, "extraction_failed")
    assert missing["payload"]["item_id"] == demo_corpus.items[-1].item_id
    assert missing["payload"]["error_class"] == MISSING_PREDICTION
    (finished,) = events_of(event_log, "run_finished")
    assert finished["payload"]["terminal_events"] == n


def test_reimport_is_a_no_op(wrapped_file, demo_corpus, event_log):
    first = import_predictions(event_log, wrapped_file, "mysystem", None, demo_corpus)
    lines = sum(1 for _ in event_log.read())
    again = import_predictions(event_log, wrapped_file, "mysystem", None, demo_corpus)
    assert again.already_finished and again.run_id == first.run_id
    assert sum(1 for _ in event_log.read()) == lines


def test_legacy_layout_needs_an_explicit_version(tmp_path, demo_corpus, event_log, events_of):
    legacy = write(
        tmp_path / "legacy.json",
        {item.item_id: {"articleBody": "text"} for item in demo_corpus.items},
    )
    with pytest.raises(PredictionsError, match=r"legacy\.json: no system version given"):
        import_predictions(event_log, legacy, "old", None, demo_corpus)
    summary = import_predictions(event_log, legacy, "old", "0.9", demo_corpus)
    assert (summary.completed, summary.failed) == (len(demo_corpus.items), 0)
    (started,) = events_of(event_log, "run_started")
    assert started["payload"]["systems"][0]["version"] == "0.9"
    assert "file_version" not in started["payload"]["systems"][0]["settings"]


def test_different_files_or_versions_are_different_runs(tmp_path, demo_corpus, event_log):
    first_id = demo_corpus.items[0].item_id
    a = write(tmp_path / "a.json", {first_id: {"articleBody": "one"}})
    b = write(tmp_path / "b.json", {first_id: {"articleBody": "two"}})
    run_a = import_predictions(event_log, a, "sys", "1", demo_corpus).run_id
    assert import_predictions(event_log, b, "sys", "1", demo_corpus).run_id != run_a
    assert import_predictions(event_log, a, "sys", "2", demo_corpus).run_id != run_a


BAD_FILES = [
    ("not json", '{"a": ', "not valid JSON"),
    ("top-level list", "[]", "expected a JSON object"),
    ("empty", "{}", "has no predictions"),
    ("unknown id", {"deadbeef": {"articleBody": "x"}}, "item 'deadbeef': not an item of corpus"),
    ("entry not object", {"{first}": "text"}, "item '{first}': expected an object, got str"),
    ("missing field", {"{first}": {"body": "x"}}, "item '{first}': field 'articleBody' is missing"),
    (
        "body wrong type",
        {"{first}": {"articleBody": ["x"]}},
        "item '{first}': field 'articleBody' must be a string or null, got list",
    ),
    (
        "wrapped output not object",
        {"version": "1", "output": []},
        "field 'output' must be an object",
    ),
    (
        "wrapped extra field",
        {"version": "1", "output": {}, "meta": 1},
        "unexpected top-level field(s) ['meta']",
    ),
    ("wrapped bad version", {"version": 3, "output": {}}, "field 'version' must be a string"),
]


@pytest.mark.parametrize(("label", "content", "expected"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_files_name_file_and_id_and_write_nothing(
    label, content, expected, tmp_path, demo_corpus, event_log
):
    first = demo_corpus.items[0].item_id
    text = content if isinstance(content, str) else json.dumps(content)
    text = text.replace("{first}", first)
    path = tmp_path / "bad-predictions.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PredictionsError) as caught:
        import_predictions(event_log, path, "sys", "1", demo_corpus)
    message = str(caught.value)
    assert str(path) in message
    assert expected.replace("{first}", first) in message
    assert event_log.segments() == []


def test_missing_file_is_reported(tmp_path, demo_corpus, event_log):
    with pytest.raises(PredictionsError, match=r"nope\.json: not found"):
        import_predictions(event_log, tmp_path / "nope.json", "sys", "1", demo_corpus)


def test_one_bad_entry_among_many_writes_nothing(tmp_path, demo_corpus, event_log):
    output = {item.item_id: {"articleBody": "fine"} for item in demo_corpus.items}
    output[demo_corpus.items[-1].item_id] = {"articleBody": 42}
    path = write(tmp_path / "p.json", {"version": "1", "output": output})
    with pytest.raises(PredictionsError, match=demo_corpus.items[-1].item_id):
        import_predictions(event_log, path, "sys", None, demo_corpus)
    assert event_log.segments() == []
