"""Checks on text a user writes into an input file (questions, gold answers, rubric texts).

Each check returns what is wrong in a few words, or None; the loader adds the file, line and
field. They run while the file is read, so a bad file is refused before any event exists.
"""

from __future__ import annotations

from urllib.parse import urlsplit

# The log refuses any event over 32 MiB (warehouse.log.MAX_EVENT_BYTES), and one question or
# rubric text is copied into many events (a problem into every judge request of its task), so
# one field is held far below that: 1 MiB is ~650 times DRACO's longest problem.
MAX_TEXT_BYTES = 1024 * 1024


def text_problem(value: str) -> str | None:
    """Why `value` cannot be stored as a user's text, or None.

    A NUL is never meant: it is what a UTF-16 file read as UTF-8 looks like, terminals and the
    app do not show it, and C-string APIs (HTTP stacks, vendor SDKs) cut the text at it, so a
    provider would be asked something other than what the user sees."""
    nul = value.find("\x00")
    if nul >= 0:
        return f"contains a NUL byte (character {nul + 1}); remove it (a UTF-16 file?)"
    # UTF-8 takes at most 4 bytes a character: most texts are cleared without encoding them.
    if len(value) * 4 > MAX_TEXT_BYTES:
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > MAX_TEXT_BYTES:
            return f"is {size:,} bytes, over the limit of {MAX_TEXT_BYTES:,} bytes for one field"
    return None


def url_problem(url: str) -> str | None:
    """Why `url` is not an absolute http(s) URL, or None."""
    text = text_problem(url)
    if text is not None:
        return text
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return f"must be an absolute http(s) URL, got {url[:80]!r}"
    return None
