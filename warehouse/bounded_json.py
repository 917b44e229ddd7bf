"""`json.loads` for files a user hands us, with a bound on nesting depth.

Python's parser recurses once per level: 100,000 nested brackets end in a `RecursionError`
traceback, and a few hundred levels parse but can exhaust the stack later (hashing, pydantic,
dumping the value into an event). No input this project reads nests deeper than about ten
levels (a DRACO row is six), so anything past `MAX_DEPTH` is refused as malformed.

`JsonTooDeep` is a `json.JSONDecodeError`: every loader that already turns a syntax error into
"file: line N: not valid JSON (...)" reports a too-deep value the same way, with the path of
the field where the nesting went too deep in the message.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 64

# A JSON string (escapes included) or one structural character; everything else is skipped.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]')
_SHOWN_STEPS = 6  # a path 100,000 steps long is cut after this many


class JsonTooDeep(json.JSONDecodeError):
    """A JSON value nested deeper than the bound; `field` is the path where it went too deep."""

    def __init__(self, doc: str, pos: int, field: str, max_depth: int):
        self.field = field
        self.max_depth = max_depth
        super().__init__(f"nested deeper than {max_depth} levels at field {field}", doc, pos)

    def __reduce__(self):  # JSONDecodeError's pickles with (msg, doc, pos) only
        return type(self), (self.doc, self.pos, self.field, self.max_depth)


def loads(text: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse `text` like `json.loads`; raise `JsonTooDeep` for nesting deeper than `max_depth`
    (an object or array at the top level is depth 1)."""
    if isinstance(text, bytes | bytearray):
        # what json.loads does with bytes, done here so error positions refer to one str
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    try:
        value = json.loads(text)
    except RecursionError:
        raise _too_deep(text, max_depth) from None
    if _deeper_than(value, max_depth):
        raise _too_deep(text, max_depth)
    return value


def _deeper_than(value: Any, max_depth: int) -> bool:
    """Walk the parsed value one level at a time, without recursion (it may be nearly as deep
    as the stack). Measured on a 20 MB array of small objects: 0.3 s level by level, 2.3 s for
    a per-node stack walk, 1.2 s for `json.loads` itself."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            return True
        # json.loads makes plain dicts and lists only: exact type checks are the fast ones
        level = [
            child
            for node in level
            for child in (node.values() if type(node) is dict else node)
            if type(child) is dict or type(child) is list
        ]
    return False


def _too_deep(text: str, max_depth: int) -> JsonTooDeep:
    """Find where the text first opens a container past `max_depth`: its offset and the
    field path leading to it (a second, token-level pass: only ever run on a refused input)."""
    path: list[str | int] = []  # per open container: the current key or index
    expecting_key = False
    for token in _TOKEN.finditer(text):
        char = token.group()[0]
        if char == '"':
            if expecting_key:
                path[-1] = _key(token.group())
                expecting_key = False
        elif char in "[{":
            if len(path) >= max_depth:
                return JsonTooDeep(text, token.start(), _field(path), max_depth)
            path.append(0 if char == "[" else "")
            expecting_key = char == "{"
        elif char in "]}":
            if path:
                path.pop()
            expecting_key = False
        elif path:  # a comma: the next index, or the next key
            if isinstance(path[-1], int):
                path[-1] += 1
            else:
                expecting_key = True
    return JsonTooDeep(text, 0, "(top level)", max_depth)  # json refused it; we cannot say where


def _key(token: str) -> str:
    try:
        return json.loads(token)
    except ValueError:
        return token[1:-1]


def _field(path: list[str | int]) -> str:
    """`'answer.sections[0]'` style; an absurdly long path is cut, its length said."""
    text = ""
    for i, step in enumerate(path[:_SHOWN_STEPS]):
        if isinstance(step, int):
            text += f"[{step}]"
        elif step and step.isprintable() and not any(c in step for c in ".[]'"):
            text += f".{step}" if i else step
        else:  # a key that would read as path syntax (or as nothing)
            text += f"[{json.dumps(step)}]"
    if not text:
        return "(top level)"
    if len(path) > _SHOWN_STEPS:
        return f"{text!r}… ({len(path)} levels down)"
    return repr(text)
