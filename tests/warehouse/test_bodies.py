"""Texts stored once (warehouse/bodies.py): a recorded body references a text the log holds,
and expanding the reference gives back the bytes sent, byte for byte."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from warehouse.bodies import (
    MIN_REFERENCED_CHARS,
    BodyRefError,
    expand_body,
    marker,
    readable_request,
    reference_texts,
    text_sha256,
    verify_sent,
)
from warehouse.canonical import sha256_hex
from warehouse.events import LlmCallRecord, RecordedRequest

# Everything JSON escapes, and everything it does not: quotes, backslashes, newlines, tabs,
# control characters, non-ASCII, U+2028, a literal "\u0041" spelled out, and a marker-like
# string that names some other text.
REPORT = (
    'Ünïcode "quoted" \\ back\\slash\r\n\ttab \u2028 sep \x01\x1f ctrl \\u0041 literal '
    f"{marker('0' * 64)} and </response> "
) * 8


def sent_body(text: str, *, requirement: str = "The report states X.") -> bytes:
    """A judge body as the SDKs write it: compact JSON, UTF-8 kept, key order of the caller."""
    prompt = f"<response>\n{text}\n</response>\n<criterion>{requirement}</criterion>"
    body = {"model": "m", "messages": [{"role": "user", "content": prompt}], "temperature": 0.0}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def referenced(sent: bytes, *texts: str) -> RecordedRequest:
    cut = reference_texts(sent.decode(), texts)
    assert cut is not None
    body, refs = cut
    return RecordedRequest(
        method="POST",
        url="https://api.example/v1/chat",
        body=body,
        body_sha256=sha256_hex(sent),
        body_refs=refs,
    )


def test_a_referenced_body_holds_no_copy_and_expands_to_the_bytes_sent() -> None:
    sent = sent_body(REPORT)
    request = referenced(sent, REPORT)
    stored = json.dumps(request.model_dump(mode="json"), ensure_ascii=False)
    assert "back\\\\slash" not in stored and "Ünïcode" not in stored
    assert len(stored) < len(sent) - len(REPORT) + 400
    assert [r.sha256 for r in request.body_refs] == [text_sha256(REPORT)]
    assert expand_body(request, [REPORT]).encode() == sent
    assert expand_body(request, {text_sha256(REPORT): REPORT}).encode() == sent
    assert verify_sent(request, [REPORT]) is True
    # the body with its marker is still JSON: a reader sees the prompt around the marker
    prompt = json.loads(request.body)["messages"][0]["content"]
    assert prompt == f"<response>\n{marker(text_sha256(REPORT))}\n</response>\n" + (
        "<criterion>The report states X.</criterion>"
    )
    # a stored event reads back to the same request, and still expands to the bytes sent
    again = RecordedRequest.model_validate(json.loads(stored))
    assert expand_body(again, [REPORT]).encode() == sent
    readable = readable_request(again, [REPORT])
    assert readable["body"] == json.loads(sent) and readable["body_matches_sha256"] is True


def test_marker_text_elsewhere_in_the_prompt_is_left_alone() -> None:
    """A requirement that spells out the very marker of the report (someone who controls both
    the rubric and the report) is not expanded: only the referenced offset is."""
    planted = marker(text_sha256(REPORT))
    sent = sent_body(REPORT, requirement=f"Quote {planted} verbatim.")
    request = referenced(sent, REPORT)
    assert len(request.body_refs) == 1 and request.body.count(planted) == 2
    assert expand_body(request, [REPORT]).encode() == sent


def test_every_copy_is_cut_and_expansion_restores_each() -> None:
    """A re-ask conversation can hold the report twice (the model echoed it back)."""
    body = {
        "messages": [
            {"role": "user", "content": f"judge this:\n{REPORT}"},
            {"role": "assistant", "content": REPORT},
            {"role": "user", "content": "Reply again with only one JSON object."},
        ]
    }
    sent = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    request = referenced(sent, REPORT)
    assert len(request.body_refs) == 2
    assert expand_body(request, [REPORT]).encode() == sent


def test_a_match_inside_an_escape_is_not_cut() -> None:
    """The text "u0001…" occurs in the JSON text only inside the escape of a control
    character: cutting there would splice escapes, so it stays inline."""
    sent = sent_body("\x01" + "x" * MIN_REFERENCED_CHARS)
    for text in ("u0001", "0001", "001", "1"):  # after the backslash, and within \uXXXX
        text += "x" * MIN_REFERENCED_CHARS
        assert json.dumps(text)[1:-1] in sent.decode()
        assert reference_texts(sent.decode(), [text]) is None


def test_short_or_absent_texts_stay_inline() -> None:
    short = "x" * (MIN_REFERENCED_CHARS - 1)
    assert reference_texts(sent_body(short).decode(), [short]) is None
    assert reference_texts(sent_body(REPORT).decode(), ["y" * 1000]) is None


def test_old_requests_expand_to_themselves_and_store_as_before() -> None:
    """A request recorded before references (parsed body, no sha256) reads as it did."""
    old = {
        "method": "POST",
        "url": "https://api.example/v1/chat",
        "headers": {"x-api-key": "[REDACTED]"},
        "body": json.loads(sent_body(REPORT)),
    }
    request = RecordedRequest.model_validate(old)
    assert request.model_dump(mode="json") == old  # no new keys in the stored JSON
    assert expand_body(request, [REPORT]) == old["body"] == expand_body(old)
    assert verify_sent(old, [REPORT]) is None
    assert readable_request(old)["body"] == old["body"]
    record = LlmCallRecord(
        provider="anthropic", model="m", prompt_id="p", prompt_sha256="0" * 64,
        raw_completion="{}", request=request,
    )  # fmt: skip
    assert "body_refs" not in record.model_dump_json()


def test_a_missing_text_or_a_moved_marker_is_an_error() -> None:
    request = referenced(sent_body(REPORT), REPORT)
    with pytest.raises(BodyRefError, match="not given"):
        expand_body(request, ["another text"])
    moved = request.model_dump(mode="json")
    moved["body_refs"][0]["offset"] += 1
    with pytest.raises(BodyRefError, match="no marker"):
        expand_body(RecordedRequest.model_validate(moved), [REPORT])
    inline = {**request.model_dump(mode="json"), "body_sha256": None}
    with pytest.raises(ValidationError, match="body_sha256"):
        RecordedRequest.model_validate(inline)
