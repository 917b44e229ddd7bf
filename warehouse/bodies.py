"""Texts stored once: a recorded request body that references a text the log already holds.

A DRACO judge sends the whole judged report in every prompt, one call per criterion × sample
(~120 a task), and the report is already in the log once: its `report_normalized` event's
`judged_text`. So the judge's recorded request does not copy it. Its `body` is kept as the
exact text sent, with each copy of the report cut out and a marker left in its place;
`body_refs` names what was cut (the text's sha256 and the offset of its marker) and
`body_sha256` is the sha256 of the bytes sent. `expand_body` puts the texts back and gives the
bytes sent, byte for byte; `verify_sent` checks them against `body_sha256`.

- Marker: `<<stored text sha256:<64 hex>>>`. It is ASCII without quotes, backslashes or control
  characters, so it reads the same in the body text and in the JSON that text parses to (SQL can
  `replace` it in the parsed prompt).
- It cannot collide with prompt text: a reference names the offset of its own marker, and
  expansion replaces exactly that span after checking the marker stands there. A prompt that
  happens to hold marker-like text anywhere else is left as it is.
- What is searched is the text's JSON-string form as the Anthropic and OpenAI SDKs write it
  (`json.dumps(text, ensure_ascii=False)` without the quotes), at an escape boundary only. A
  reference is kept only when expanding it gives back the sent text exactly and the body still
  parses as JSON; otherwise the body is recorded inline, as it always was.
- Texts shorter than `MIN_REFERENCED_CHARS` stay inline: a reference (marker plus ref, about
  150 bytes) would cost about as much as it saves.
- A request without `body_refs` (every request recorded before this, and any request with
  nothing to reference) expands to its body unchanged: old logs read as they did, and no
  upcaster is needed.

Pure functions over the JSON shape of a `RecordedRequest` (the model or its dump), so the
collectors (writing), the app and `bench sql` users (reading) share one rule.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from warehouse.canonical import sha256_hex

MIN_REFERENCED_CHARS = 256
_MARKER = "<<stored text sha256:{}>>"


class BodyRefError(ValueError):
    """A reference that cannot be expanded: its text is not given, or its marker is not where
    the reference says (a corrupt or hand-edited event)."""


def marker(sha256: str) -> str:
    """What stands in a recorded body where the text with this sha256 was cut out."""
    return _MARKER.format(sha256)


def text_sha256(text: str) -> str:
    """The sha256 a reference names: of the text's UTF-8 bytes (as `report_normalized` texts
    are hashed everywhere else)."""
    return sha256_hex(text)


def json_string_body(text: str) -> str:
    """`text` as it stands inside a JSON string the SDKs send: RFC 8259 escapes as Python's json
    writes them with ensure_ascii=False (quote, backslash and control characters escaped, every
    other character kept), without the surrounding quotes."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def reference_texts(sent: str, texts: Iterable[str]) -> tuple[str, list[dict[str, Any]]] | None:
    """`sent` (a JSON body as sent, secrets already redacted) with every copy of each text cut
    out: (the body with markers, the references `[{"sha256", "offset"}]`), or None when nothing
    was cut or the cut body would not give `sent` back exactly."""
    by_sha = {text_sha256(t): t for t in texts if len(t) >= MIN_REFERENCED_CHARS}
    spans: list[tuple[int, int, str]] = []
    for sha, text in by_sha.items():
        needle = json_string_body(text)
        start = sent.find(needle)
        while start != -1:
            if _at_escape_boundary(sent, start):
                spans.append((start, start + len(needle), sha))
                start = sent.find(needle, start + len(needle))
            else:
                start = sent.find(needle, start + 1)
    if not spans:
        return None
    pieces: list[str] = []
    refs: list[dict[str, Any]] = []
    cursor = length = 0
    for start, end, sha in sorted(spans):
        if start < cursor:  # overlaps a copy already cut
            continue
        pieces.append(sent[cursor:start])
        length += start - cursor
        refs.append({"sha256": sha, "offset": length})
        pieces.append(marker(sha))
        length += len(pieces[-1])
        cursor = end
    pieces.append(sent[cursor:])
    stored = "".join(pieces)
    try:
        json.loads(stored)
        exact = _expand(stored, refs, by_sha) == sent
    except (ValueError, BodyRefError):
        return None
    return (stored, refs) if exact else None


def expand_body(request: Any, texts: Iterable[str] | Mapping[str, str] = ()) -> Any:
    """The recorded body with every referenced text put back: for a request with `body_refs`,
    the exact text sent (a str); for any other request its `body`, unchanged.

    `texts`: the texts it may reference (e.g. the judged report of the verdict's
    `source_event_id`), or a mapping sha256 -> text. Raises BodyRefError when a referenced
    text is missing."""
    fields = _fields(request)
    refs = fields.get("body_refs") or []
    if not refs:
        return fields.get("body")
    return _expand(fields["body"], refs, _by_sha(texts))


def verify_sent(request: Any, texts: Iterable[str] | Mapping[str, str] = ()) -> bool | None:
    """Whether the expanded body hashes to the recorded sha256 of the bytes sent; None when the
    request keeps no such hash (recorded inline, as every request before references was)."""
    fields = _fields(request)
    expected = fields.get("body_sha256")
    if not expected:
        return None
    return sha256_hex(expand_body(fields, texts)) == expected


def readable_request(request: Any, texts: Iterable[str] | Mapping[str, str] = ()) -> dict:
    """The request as it was sent, for people: method, url, headers and the expanded body,
    parsed when it is JSON text, with `body_sha256` and whether the body matches it."""
    fields = _fields(request)
    body = expand_body(fields, texts)
    if fields.get("body_refs") and isinstance(body, str):
        with contextlib.suppress(ValueError):  # a body that was never JSON stays text
            body = json.loads(body)
    readable = {k: fields.get(k) for k in ("method", "url", "headers")}
    readable["body"] = body
    if fields.get("body_sha256"):
        readable["body_sha256"] = fields["body_sha256"]
        readable["body_matches_sha256"] = verify_sent(fields, texts)
    return readable


def _expand(stored: str, refs: Iterable[Mapping[str, Any]], by_sha: Mapping[str, str]) -> str:
    if not isinstance(stored, str):
        raise BodyRefError("a body with references must be the text sent")
    pieces: list[str] = []
    cursor = 0
    for ref in sorted(refs, key=lambda r: r["offset"]):
        sha, offset = ref["sha256"], ref["offset"]
        stand_in = marker(sha)
        if offset < cursor or stored[offset : offset + len(stand_in)] != stand_in:
            raise BodyRefError(f"no marker for text {sha} at offset {offset} of the body")
        try:
            text = by_sha[sha]
        except KeyError:
            raise BodyRefError(
                f"the body references text sha256 {sha}, which was not given"
            ) from None
        pieces += [stored[cursor:offset], json_string_body(text)]
        cursor = offset + len(stand_in)
    pieces.append(stored[cursor:])
    return "".join(pieces)


def _at_escape_boundary(text: str, index: int) -> bool:
    """Whether `index` starts a character of a JSON string's text rather than falling inside an
    escape (`\\x` or `\\uXXXX`): a match there would splice escapes together."""
    if _backslashes_before(text, index) % 2:
        return False
    for start in range(max(0, index - 5), index - 1):
        if (
            text[start] == "\\"
            and text[start + 1] == "u"
            and _backslashes_before(text, start) % 2 == 0
        ):
            return False
    return True


def _backslashes_before(text: str, index: int) -> int:
    count = 0
    while index - count > 0 and text[index - count - 1] == "\\":
        count += 1
    return count


def _by_sha(texts: Iterable[str] | Mapping[str, str]) -> Mapping[str, str]:
    if isinstance(texts, Mapping):
        return texts
    return {text_sha256(text): text for text in texts}


def _fields(request: Any) -> Mapping[str, Any]:
    if hasattr(request, "model_dump"):
        return request.model_dump(mode="json")
    if isinstance(request, Mapping):
        return request
    raise TypeError(f"expected a RecordedRequest or its JSON shape, got {type(request).__name__}")


__all__ = [
    "MIN_REFERENCED_CHARS",
    "BodyRefError",
    "expand_body",
    "json_string_body",
    "marker",
    "readable_request",
    "reference_texts",
    "text_sha256",
    "verify_sent",
]
