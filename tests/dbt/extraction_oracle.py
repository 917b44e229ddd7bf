"""Independent oracle for the extraction metrics, written from the formulas, not from our SQL.

Shingle metric: scrapinghub/article-extraction-benchmark evaluate.py (see
../shared/data/article-extraction-benchmark/SOURCE.md). Completeness and token F1: methodology
section 4.1 (live-URL benchmark). Deliberately plain (naive loops, no sliding window) so that a
bug in the warehouse cannot be repeated here by sharing code.
"""

from __future__ import annotations

import functools
import math
import re
import statistics
import unicodedata
from collections import Counter
from dataclasses import dataclass

# --- shingle metric (upstream) ---------------------------------------------------------------


@functools.cache  # pure; the e2e tests score the same texts many times
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\w+", text))


def tokenize(text: str | None) -> list[str]:
    return list(_tokens(text or ""))


def shingle_counts(text: str | None, n: int = 4) -> Counter:
    tokens = tokenize(text)
    counts: Counter = Counter()
    for i in range(0, max(1, len(tokens) - n + 1)):
        shingle = tuple(tokens[i : i + n])
        if shingle:
            counts[shingle] += 1
    return counts


@dataclass(frozen=True)
class PageShingles:
    tp: int
    fp: int
    fn: int

    @property
    def normalized(self) -> tuple[float, float, float]:
        s = self.tp + self.fp + self.fn
        if s > 0:
            return self.tp / s, self.fp / s, self.fn / s
        return 0.0, 0.0, 0.0


@functools.cache  # pure; the e2e tests score the same texts many times
def page_shingles(true: str | None, pred: str | None) -> PageShingles:
    true_counts, pred_counts = shingle_counts(true), shingle_counts(pred)
    tp = fp = fn = 0
    for key in set(true_counts) | set(pred_counts):
        t, p = true_counts[key], pred_counts[key]
        tp += min(t, p)
        fp += max(0, p - t)
        fn += max(0, t - p)
    return PageShingles(tp, fp, fn)


def precision_score(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == fp == 0:
        return 0.0
    return tp / (tp + fp)


def recall_score(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == fn == 0:
        return 0.0
    return tp / (tp + fn)


def exact_match(true: str | None, pred: str | None) -> bool:
    return tokenize(true) == tokenize(pred)


@dataclass(frozen=True)
class Corpus:
    precision: float | None
    recall: float | None
    f1: float
    accuracy: float


def corpus_metrics(pairs: list[tuple[str | None, str | None]]) -> Corpus:
    """pairs = (truth, prediction) per page; a failed/missing page has prediction None."""
    pages = [page_shingles(t, p).normalized for t, p in pairs]
    precisions = [precision_score(*page) for page in pages if page[0] + page[1] > 0]
    recalls = [recall_score(*page) for page in pages if page[0] + page[2] > 0]
    precision = statistics.mean(precisions) if precisions else None
    recall = statistics.mean(recalls) if recalls else None
    if precision is None or recall is None or precision + recall == 0:
        f1 = 0.0
    else:
        f1 = 2 * precision * recall / (precision + recall)
    accuracy = statistics.mean(exact_match(t, p) for t, p in pairs)
    return Corpus(precision, recall, f1, accuracy)


# --- live-URL family (methodology 4.1) --------------------------------------------------------


@functools.cache  # pure; the e2e tests score the same texts many times
def normalize(text: str | None) -> str:
    text = unicodedata.normalize("NFKC", text or "")
    return re.sub(r"\s+", " ", text).strip()


def completeness(anchors: list[str], output: str | None) -> float | None:
    if not anchors:
        return None
    normalized = normalize(output)
    return sum(anchor in normalized for anchor in anchors) / len(anchors)


def _clipped_overlap(tokens: list[str], passage: Counter) -> int:
    counts = Counter(tokens)
    return sum(min(count, passage[token]) for token, count in counts.items())


@functools.cache  # pure; the e2e tests score the same texts many times
def token_recall(passage: str, output: str | None) -> float | None:
    passage_tokens = tokenize(normalize(passage))
    if not passage_tokens:
        return None
    return _clipped_overlap(passage_tokens, Counter(tokenize(normalize(output)))) / len(
        passage_tokens
    )


@functools.cache  # pure; the e2e tests score the same texts many times
def window_precision(passage: str, output: str | None) -> float | None:
    passage_tokens = tokenize(normalize(passage))
    output_tokens = tokenize(normalize(output))
    if not passage_tokens:
        return None
    if not output_tokens:
        return 0.0
    passage_counts = Counter(passage_tokens)
    width = min(len(passage_tokens), len(output_tokens))
    best = 0.0
    for start in range(0, len(output_tokens) - width + 1):
        window = output_tokens[start : start + width]
        best = max(best, _clipped_overlap(window, passage_counts) / width)
    return best


def token_f1(passage: str, output: str | None) -> float | None:
    recall, precision = token_recall(passage, output), window_precision(passage, output)
    if recall is None or precision is None:
        return None
    return recall * precision


# --- leaderboard terms ---------------------------------------------------------------------------


def latency_score(p95_s: float | None, scale_s: float = 10.0) -> float | None:
    return None if p95_s is None else math.exp(-p95_s / scale_s)


def throughput_score(avg_bytes: float, full_bytes: float = 100_000) -> float:
    return min(avg_bytes / full_bytes, 1.0)


def percentile_cont(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


SEED_WEIGHTS = {
    "completeness": 0.40,
    "success": 0.30,
    "f1": 0.20,
    "latency": 0.05,
    "throughput": 0.05,
}
# dbt_project.yml's defaults: the seed composite, plus the shingle terms at weight 0
DEFAULT_WEIGHTS = {**SEED_WEIGHTS, "shingle_precision": 0, "shingle_recall": 0, "shingle_f1": 0}


def composite(terms: dict[str, float | None], weights: dict[str, float] = DEFAULT_WEIGHTS) -> float:
    """A weight left out counts 0, like the dbt macro."""
    return sum(weight * (terms[key] or 0.0) for key, weight in weights.items())


# --- bootstrap ---------------------------------------------------------------------------------


def bootstrap_std(
    pages: list[tuple[float, float, float, bool]],
    *,
    seed: int,
    samples: int,
    run_id: str,
    system: str,
) -> dict[str, float | None]:
    """Sample std (ddof=1) of corpus P, R, F1, accuracy over `samples` resamples of `pages`.

    pages = (tp, fp, fn, exact_match) per page, normalised or raw, in (position, item_id) order.
    The draw follows the seed contract documented in int_extraction_systems_bootstrapped.py:
    generator default_rng([seed, first 8 bytes of sha256(run_id \\x1f system)]) and one
    samples x pages matrix of indices; everything after the draw is recomputed plainly here.
    """
    import hashlib

    import numpy as np

    digest = hashlib.sha256(f"{run_id}\x1f{system}".encode()).digest()
    rng = np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])
    index = rng.integers(0, len(pages), size=(samples, len(pages)))
    series: dict[str, list[float]] = {"precision": [], "recall": [], "f1": [], "accuracy": []}
    for row in index:
        chosen = [pages[i] for i in row]
        precisions = [precision_score(tp, fp, fn) for tp, fp, fn, _ in chosen if tp + fp > 0]
        recalls = [recall_score(tp, fp, fn) for tp, fp, fn, _ in chosen if tp + fn > 0]
        p = statistics.mean(precisions) if precisions else None
        r = statistics.mean(recalls) if recalls else None
        if p is not None:
            series["precision"].append(p)
        if r is not None:
            series["recall"].append(r)
        series["f1"].append(0.0 if p is None or r is None or p + r == 0 else 2 * p * r / (p + r))
        series["accuracy"].append(statistics.mean(float(exact) for *_, exact in chosen))
    return {k: (statistics.stdev(v) if len(v) >= 2 else None) for k, v in series.items()}
