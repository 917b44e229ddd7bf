"""Every page-level score of the live-URL benchmark (methodology §4.1), against the consensus
ground truth of int_live_extraction_anchors. Grain: (run_id, item_id, system) of the grid.

  completeness     = anchors contained in the normalised output / anchors of the URL
                     (NULL when the URL has no anchor: never a free 1.0)
  passage          = the URL's anchors joined by one space, in anchor order
  token_recall     = sum_t min(out[t], passage[t]) / len(passage), on \\w+ tokens
  window_precision = max over output windows of len(passage) tokens (the whole output when
                     shorter) of sum_t min(window[t], passage[t]) / window length
  token_f1         = token_recall * window_precision (the benchmark's "F1": a product)
  useful_success   = raw_success and not non_content and completeness >= threshold
                     (var useful_success_threshold)
The token-F1 pieces are bench_text's, the offline family's too (int_extraction_outputs_normalized),
held to one oracle in tests.
"""

import json
from collections import Counter

import pyarrow as pa
from bench_text import WORD, best_window_precision, token_counts, token_recall
from bench_vars import scoring_value

SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("item_id", pa.string()),
        ("system", pa.string()),
        ("anchors_total", pa.int64()),
        ("anchors_found", pa.int64()),
        ("completeness", pa.float64()),
        ("passage_tokens", pa.int64()),
        ("token_recall", pa.float64()),
        ("window_precision", pa.float64()),
        ("token_f1", pa.float64()),
        ("useful_success", pa.bool_()),
        ("useful_success_threshold", pa.float64()),
        ("consensus_rule_version", pa.string()),
    ]
)


def model(dbt, session):
    dbt.config(materialized="table")
    threshold = float(
        scoring_value("useful_success_threshold", dbt.config.get("useful_success_threshold"))
    )
    rule = scoring_value("live_consensus_rule", dbt.config.get("live_consensus_rule"))
    rule_version = str((json.loads(rule) if isinstance(rule, str) else rule)["version"])
    anchors = {}
    for row in (
        dbt.ref("int_live_extraction_anchors")
        .project("run_id, item_id, anchor_index, anchor")
        .order("run_id, item_id, anchor_index")
        .to_arrow_table()
        .to_pylist()
    ):
        anchors.setdefault((row["run_id"], row["item_id"]), []).append(row["anchor"])
    pages = (
        dbt.ref("int_live_extraction_pages_flagged")
        .project("run_id, item_id, system, normalized_output, raw_success, non_content")
        .order("run_id, item_id, system")
        .to_arrow_table()
        .to_pylist()
    )
    passages = {}
    columns = {field.name: [] for field in SCHEMA}
    for page in pages:
        key = (page["run_id"], page["item_id"])
        item_anchors = anchors.get(key, [])
        if key not in passages:
            passages[key] = token_counts(" ".join(item_anchors))
        passage_counts, passage_len = passages[key]
        output = page["normalized_output"] or ""
        output_tokens = WORD.findall(output)
        found = sum(1 for anchor in item_anchors if anchor in output)
        completeness = found / len(item_anchors) if item_anchors else None
        recall = token_recall(passage_counts, passage_len, Counter(output_tokens))
        precision = best_window_precision(passage_counts, passage_len, output_tokens)
        useful = (
            bool(page["raw_success"])
            and not page["non_content"]
            and completeness is not None
            and completeness >= threshold
        )
        for name, value in (
            ("run_id", page["run_id"]),
            ("item_id", page["item_id"]),
            ("system", page["system"]),
            ("anchors_total", len(item_anchors)),
            ("anchors_found", found),
            ("completeness", completeness),
            ("passage_tokens", passage_len),
            ("token_recall", recall),
            ("window_precision", precision),
            ("token_f1", None if recall is None else recall * precision),
            ("useful_success", useful),
            ("useful_success_threshold", threshold),
            ("consensus_rule_version", rule_version),
        ):
            columns[name].append(value)
    return pa.table(columns, schema=SCHEMA)
