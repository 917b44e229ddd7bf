"""Seeded percentile bootstrap 95 % interval of the mean item score, per (run_id, lane, judge_id).

The vendor score is the mean item score over every item of the grid (failed and missing items at
0.0, incomplete ones at their partial score). var('draco_bootstrap_samples') resamples of those
items with replacement; the interval is the 2.5th and 97.5th percentile of the resampled means
(numpy linear interpolation).

Determinism (dbt_project/python/bench_stats.py): each group draws from its own generator,
    numpy.random.default_rng([draco_bootstrap_seed, first 8 bytes of sha256(run_id \\x1f lane \\x1f judge_id)]),
over its items ordered by (position, item_id): a group's interval depends only on the seed and
its own items, so rebuilds are bit-identical and other runs or regimes never move it.
No items or 0 samples -> NULL interval.

Grain: one row per (run_id, lane, judge_id) of int_draco_items_scored. Tested in tests/dbt_draco.
"""

import pyarrow as pa
from bench_stats import bootstrap_vars, grouped_values, mean_interval_table

SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("lane", pa.string()),
        ("judge_id", pa.string()),
        ("n_items", pa.int64()),
        ("bootstrap_seed", pa.int64()),
        ("bootstrap_samples", pa.int64()),
        ("score_ci_low", pa.float64()),
        ("score_ci_high", pa.float64()),
    ]
)


def model(dbt, session):
    dbt.config(materialized="table")
    seed, samples = bootstrap_vars(
        draco_bootstrap_seed=dbt.config.get("draco_bootstrap_seed"),
        draco_bootstrap_samples=dbt.config.get("draco_bootstrap_samples"),
    )
    rows = (
        dbt.ref("int_draco_items_scored")
        .project("run_id, lane, judge_id, position, item_id, score")
        .order("run_id, lane, judge_id, position, item_id")
        .to_arrow_table()
        .to_pylist()
    )
    groups = grouped_values(rows, ("run_id", "lane", "judge_id"), lambda row: row["score"])
    return mean_interval_table(groups, seed, samples, SCHEMA)
