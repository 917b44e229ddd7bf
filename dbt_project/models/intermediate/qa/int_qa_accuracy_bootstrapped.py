"""Seeded percentile bootstrap 95 % interval of strict accuracy, per (run_id, lane, grader_id).

Strict accuracy = correct / graded rows (labels correct | incorrect | not_attempted; rows that
did not land are out). var('qa_bootstrap_samples') resamples of the graded rows with
replacement; the interval is the 2.5th and 97.5th percentile (numpy linear interpolation).

Determinism (dbt_project/python/bench_stats.py): each group draws from its own generator,
    numpy.random.default_rng([qa_bootstrap_seed, first 8 bytes of sha256(run_id \\x1f lane \\x1f grader_id)]),
over its rows ordered by (sample_order, item_id): a group's interval depends only on the seed
and its own rows, so rebuilds are bit-identical and other runs never move it.
Fewer than one graded row or 0 samples -> NULL interval.

Grain: one row per (run_id, lane, grader_id) of int_qa_answers_scored. Tested in tests/dbt_qa.
"""

import pyarrow as pa
from bench_stats import bootstrap_vars, grouped_values, mean_interval_table

SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("lane", pa.string()),
        ("grader_id", pa.string()),
        ("n_graded", pa.int64()),
        ("bootstrap_seed", pa.int64()),
        ("bootstrap_samples", pa.int64()),
        ("strict_accuracy_ci_low", pa.float64()),
        ("strict_accuracy_ci_high", pa.float64()),
    ]
)


def strict_correct(row) -> float | None:
    """1 correct, 0 incorrect or not attempted, None (left out) for a row not graded."""
    return None if row["label"] is None else float(row["label"] == "correct")


def model(dbt, session):
    dbt.config(materialized="table")
    seed, samples = bootstrap_vars(
        qa_bootstrap_seed=dbt.config.get("qa_bootstrap_seed"),
        qa_bootstrap_samples=dbt.config.get("qa_bootstrap_samples"),
    )
    rows = (
        dbt.ref("int_qa_answers_scored")
        .project("run_id, lane, grader_id, sample_order, item_id, label")
        .order("run_id, lane, grader_id, sample_order, item_id")
        .to_arrow_table()
        .to_pylist()
    )
    groups = grouped_values(rows, ("run_id", "lane", "grader_id"), strict_correct)
    return mean_interval_table(groups, seed, samples, SCHEMA)
