"""Normalised output text and the token-F1 pieces of every page of the extraction grid.

The normaliser (NFKC, whitespace runs -> one space, stripped, case kept) and the token-F1
pieces (token_recall, window_precision) are bench_text's, shared with the live-URL family.
Anchors arrive already normalised (item_registered); completeness (anchors found as substrings)
is computed in SQL on `normalized_output` so that it can be unit tested.

Grain: one row per (run_id, system, item_id) of int_extraction_pages_gridded.
Checked against an independent oracle in tests/dbt (dbt cannot unit test Python models).
"""

from collections import Counter

import pyarrow as pa
from bench_text import (
    NORMALIZER_VERSION,
    WORD,
    best_window_precision,
    normalize,
    token_counts,
    token_recall,
)

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
            passages[truth] = token_counts(normalize(truth))
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
