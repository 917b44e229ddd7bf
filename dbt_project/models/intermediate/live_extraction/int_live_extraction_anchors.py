"""Consensus ground truth of the live-URL benchmark: anchors confirmed by >= 2 independent
extractors, re-derivable from the stored outputs under a versioned rule (var live_consensus_rule).

Rule (version in the var; change any number -> a new version):
1. Candidates: the outputs of int_live_extraction_pages_flagged with consensus_candidate (raw
   success, no non-content rule fired).
2. Passages: each candidate's raw output is split into lines, each line into sentences after
   . ! or ? followed by whitespace; each piece goes through the one fixed normaliser (NFKC,
   whitespace collapsed, stripped, case kept); pieces with fewer than `min_words` space-separated
   words are dropped.
3. A passage is an anchor when the normalised full outputs of at least `min_engines`
   independence groups contain it verbatim (its own group included). Groups: with
   independence = provider, engines of one provider are one group and each local engine is its
   own group; with independence = engine, every engine is its own group.
4. Anchors are deduplicated, kept in the order first seen when candidates are visited by
   (group, system) and passages in output order; `confirmed_by` lists every engine whose output
   contains the anchor.
Grain: one row per (run_id, item_id, anchor_index). URLs with no anchor have no row.
Checked against a plain-Python oracle in tests/live_extraction.
"""

import json
import re

import pyarrow as pa
from bench_text import normalize
from bench_vars import scoring_value

SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("item_id", pa.string()),
        ("anchor_index", pa.int64()),
        ("anchor", pa.string()),
        ("confirmed_by", pa.list_(pa.string())),
        ("confirming_groups", pa.int64()),
        ("consensus_rule_version", pa.string()),
    ]
)


def passages(text, min_words):
    out = []
    for line in (text or "").splitlines():
        for piece in SENTENCE_END.split(line):
            passage = normalize(piece)
            if len(passage.split(" ")) >= min_words and passage:
                out.append(passage)
    return out


def group_of(row, independence):
    return row["system"] if independence == "engine" else row["provider"]


def anchors_for(rows, rule):
    """rows: candidates of one (run, item) with system, provider, output_text, normalized_output."""
    min_engines, min_words = int(rule["min_engines"]), int(rule["min_words"])
    rows = sorted(rows, key=lambda r: (group_of(r, rule["independence"]), r["system"]))
    seen, anchors = set(), []
    for row in rows:
        for passage in passages(row["output_text"], min_words):
            if passage in seen:
                continue
            seen.add(passage)
            confirming = [r for r in rows if passage in r["normalized_output"]]
            groups = {group_of(r, rule["independence"]) for r in confirming}
            if len(groups) >= min_engines:
                anchors.append((passage, sorted(r["system"] for r in confirming), len(groups)))
    return anchors


def model(dbt, session):
    dbt.config(materialized="table")
    rule = scoring_value("live_consensus_rule", dbt.config.get("live_consensus_rule"))
    rule = json.loads(rule) if isinstance(rule, str) else rule
    if rule["independence"] not in ("provider", "engine"):
        raise ValueError(
            f"live_consensus_rule.independence must be provider or engine, got {rule['independence']!r}"
        )
    rows = (
        dbt.ref("int_live_extraction_pages_flagged")
        .filter("consensus_candidate")
        .project("run_id, item_id, system, provider, output_text, normalized_output")
        .order("run_id, item_id, system")
        .to_arrow_table()
        .to_pylist()
    )
    by_item = {}
    for row in rows:
        by_item.setdefault((row["run_id"], row["item_id"]), []).append(row)
    columns = {field.name: [] for field in SCHEMA}
    for (run_id, item_id), item_rows in sorted(by_item.items()):
        for index, (anchor, confirmed_by, groups) in enumerate(anchors_for(item_rows, rule)):
            for name, value in (
                ("run_id", run_id),
                ("item_id", item_id),
                ("anchor_index", index),
                ("anchor", anchor),
                ("confirmed_by", confirmed_by),
                ("confirming_groups", groups),
                ("consensus_rule_version", str(rule["version"])),
            ):
                columns[name].append(value)
    return pa.table(columns, schema=SCHEMA)
