"""The one fixed text normaliser and the token-F1 pieces both extraction families score with.

On the Python path of dbt's process through `module_paths` in profiles.yml (as bench_stats).
DuckDB has no NFKC, so the normaliser lives here: NFKC, whitespace runs collapsed to one space,
stripped, case kept.

Token F1 (the benchmark's name for a product, not a harmonic mean), on \\w+ tokens:
  token_recall     = sum_t min(out[t], passage[t]) / len(passage)
  window_precision = max over output windows of len(passage) tokens (the whole output when it is
                     shorter) of sum_t min(window[t], passage[t]) / window length
The window maximum is an O(n) sliding count. Empty output -> both 0; empty passage -> NULL.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

NORMALIZER_VERSION = "nfkc-ws-1"
WORD = re.compile(r"\w+")


def normalize(text: str | None) -> str:
    return " ".join(unicodedata.normalize("NFKC", text or "").split())


def token_counts(text: str) -> tuple[Counter, int]:
    """A text's \\w+ token counts and its length in tokens."""
    tokens = WORD.findall(text)
    return Counter(tokens), len(tokens)


def token_recall(passage_counts: Counter, passage_len: int, output_counts: Counter):
    if passage_len == 0:
        return None
    found = sum(min(count, output_counts.get(token, 0)) for token, count in passage_counts.items())
    return found / passage_len


def best_window_precision(passage_counts: Counter, passage_len: int, output_tokens: list[str]):
    if passage_len == 0:
        return None
    if not output_tokens:
        return 0.0
    width = min(passage_len, len(output_tokens))
    window = Counter(output_tokens[:width])
    # matched = sum_t min(window[t], passage[t]), kept up to date as the window slides
    matched = sum(min(count, passage_counts.get(token, 0)) for token, count in window.items())
    best = matched
    for start in range(1, len(output_tokens) - width + 1):
        leaving, entering = output_tokens[start - 1], output_tokens[start + width - 1]
        if leaving == entering:
            continue
        window[leaving] -= 1
        if window[leaving] < passage_counts.get(leaving, 0):
            matched -= 1
        if window[entering] < passage_counts.get(entering, 0):
            matched += 1
        window[entering] += 1
        best = max(best, matched)
    return best / width
