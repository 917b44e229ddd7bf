"""Normalised output text and the token-F1 pieces of every page of the extraction grid.

DuckDB has no NFKC, so the one fixed text normaliser of the live-URL benchmark lives here:
NFKC, whitespace runs collapsed to one space, stripped, case kept. Anchors arrive already
normalised (item_registered); completeness (anchors found as substrings) is computed in SQL on
`normalized_output` so that it can be unit tested.

Token F1 (the benchmark's name for a product, not a harmonic mean), on \\w+ tokens of the
normalised texts:
  token_recall     = sum_t min(out[t], passage[t]) / len(passage)
  window_precision = max over output windows of len(passage) tokens (the whole output when it is
                     shorter) of sum_t min(window[t], passage[t]) / window length
The window maximum is an O(n) sliding count. Empty output -> both 0; empty passage -> NULL.

Grain: one row per (run_id, system, item_id) of int_extraction_pages_gridded.
Checked against an independent oracle in tests/dbt (dbt cannot unit test Python models).
"""

import re
import unicodedata
from collections import Counter

import pyarrow as pa

NORMALIZER_VERSION = "nfkc-ws-1"
WORD = re.compile(r"\w+")

SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("system", pa.string()),
        ("item_id", pa.string()),
        ("normalizer_version", pa.string()),
        ("normalized_output", pa.string()),
        ("normalized_output_chars", pa.int64()),
        ("passage_tokens", pa.int64()),
        ("normalized_output_tokens", pa.int64()),
        ("token_recall", pa.float64()),
        ("window_precision", pa.float64()),
    ]
)


def normalize(text):
    return " ".join(unicodedata.normalize("NFKC", text or "").split())


def token_recall(passage_counts, passage_len, output_counts):
    if passage_len == 0:
        return None
    found = sum(min(count, output_counts.get(token, 0)) for token, count in passage_counts.items())
    return found / passage_len


def best_window_precision(passage_counts, passage_len, output_tokens):
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


def model(dbt, session):
    dbt.config(materialized="table")
    pages = (
        dbt.ref("int_extraction_pages_gridded")
        .project("run_id, system, item_id, ground_truth_text, output_text")
        .order("run_id, system, item_id")
        .to_arrow_table()
        .to_pylist()
    )
    passages = {}  # ground truth text -> (token counts, token count); shared across systems
    columns = {field.name: [] for field in SCHEMA}
    for page in pages:
        truth = page["ground_truth_text"] or ""
        if truth not in passages:
            passage_tokens = WORD.findall(normalize(truth))
            passages[truth] = (Counter(passage_tokens), len(passage_tokens))
        passage_counts, passage_len = passages[truth]
        output = normalize(page["output_text"])
        output_tokens = WORD.findall(output)
        row = {
            "run_id": page["run_id"],
            "system": page["system"],
            "item_id": page["item_id"],
            "normalizer_version": NORMALIZER_VERSION,
            "normalized_output": output,
            "normalized_output_chars": len(output),
            "passage_tokens": passage_len,
            "normalized_output_tokens": len(output_tokens),
            "token_recall": token_recall(passage_counts, passage_len, Counter(output_tokens)),
            "window_precision": best_window_precision(passage_counts, passage_len, output_tokens),
        }
        for name, value in row.items():
            columns[name].append(value)
    return pa.table(columns, schema=SCHEMA)
