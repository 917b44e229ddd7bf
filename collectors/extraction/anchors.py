"""Ground-truth anchors and the one text normaliser used to match them.

Normaliser (`normalize_text`): Unicode NFKC, then every run of whitespace (any Unicode
whitespace, newlines included) becomes one space, then leading/trailing spaces are stripped.
Case is kept. The same function is applied to ground truth and to extractor output.

Anchor rule, version `ANCHOR_RULE_VERSION` = "1" (recorded on every `item_registered`):

1. Split the ground-truth text into paragraphs on newlines; normalise each; drop empty ones.
2. A paragraph qualifies if it has at least `MIN_WORDS` (6) words (space-separated tokens
   after normalisation).
3. Its anchor is its first `ANCHOR_WORDS` (12) words joined by single spaces: a verbatim,
   normalised excerpt of the truth. Repeated anchors are kept once (first occurrence).
4. At most `MAX_ANCHORS` (40) anchors per page. When more qualify, take 40 spread evenly over
   the page (indices round(i * (n - 1) / 39)), so an output that stops half way through a
   long article cannot find them all.
5. If no paragraph qualifies but the truth has words, the single anchor is the first 12
   words of the whole normalised truth, so every page with a truth has at least one anchor.

Scoring (done later, in dbt): completeness = share of a page's anchors that are substrings of
the normalised output. Changing any number or step above means a new rule version.
"""

from __future__ import annotations

import re
import unicodedata

ANCHOR_RULE_VERSION = "1"
MIN_WORDS = 6
ANCHOR_WORDS = 12
MAX_ANCHORS = 40

_WHITESPACE = re.compile(r"\s+")


def normalize_text(text: str | None) -> str:
    if not text:
        return ""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip()


def _spread(candidates: list[str], limit: int) -> list[str]:
    if len(candidates) <= limit:
        return candidates
    if limit == 1:
        return candidates[:1]
    last = len(candidates) - 1
    return [candidates[round(i * last / (limit - 1))] for i in range(limit)]


def build_anchors(truth: str) -> list[str]:
    candidates: list[str] = []
    seen: set[str] = set()
    for paragraph in truth.splitlines():
        words = normalize_text(paragraph).split(" ")
        if len(words) < MIN_WORDS:
            continue
        anchor = " ".join(words[:ANCHOR_WORDS])
        if anchor not in seen:
            seen.add(anchor)
            candidates.append(anchor)
    if not candidates:
        whole = normalize_text(truth)
        return [" ".join(whole.split(" ")[:ANCHOR_WORDS])] if whole else []
    return _spread(candidates, MAX_ANCHORS)


def anchors_found(anchors: list[str], output: str | None) -> int:
    """How many anchors occur in the output: the reference for dbt's completeness."""
    haystack = normalize_text(output)
    return sum(1 for anchor in anchors if anchor in haystack)
