"""Bootstrap standard deviations of the corpus shingle metrics, per (run_id, system).

Upstream resamples pages with replacement 1,000 times, recomputes corpus precision, recall,
F1 and accuracy each time, and prints 1.96 x stdev as "±". We store the standard deviation
(ddof=1) and, beside it, the 1.96 half-width.

Determinism (dbt_project/python/bench_stats.py): each (run_id, system) draws from its own
generator,
    numpy.random.default_rng([bootstrap_seed, first 8 bytes of sha256(run_id \\x1f system)]),
over its pages ordered by (position, item_id). A group's result therefore depends only on the
seed and its own pages: rebuilding from the log, or adding another run, never moves it.

Corpus rules (same as the SQL leaderboard): precision = mean page precision over pages with
tp + fp > 0, recall = mean page recall over pages with tp + fn > 0, F1 = 2PR / (P + R) with 0
when P + R = 0 or either mean is undefined; accuracy = share of exact matches. A resample
where a mean is undefined is left out of that metric's deviation.

Grain: one row per (run_id, system) of int_extraction_pages_scored.
"""

import numpy as np
import pyarrow as pa
from bench_stats import check_bootstrap_vars, group_rng, resample_indices
from bench_vars import scoring_value

SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("system", pa.string()),
        ("n_pages", pa.int64()),
        ("bootstrap_seed", pa.int64()),
        ("bootstrap_samples", pa.int64()),
        ("shingle_precision_std", pa.float64()),
        ("shingle_recall_std", pa.float64()),
        ("shingle_f1_std", pa.float64()),
        ("shingle_accuracy_std", pa.float64()),
        ("shingle_precision_halfwidth_95", pa.float64()),
        ("shingle_recall_halfwidth_95", pa.float64()),
        ("shingle_f1_halfwidth_95", pa.float64()),
        ("shingle_accuracy_halfwidth_95", pa.float64()),
    ]
)


def corpus_metrics(precision, recall, in_precision, in_recall, exact, index):
    """Corpus P, R, F1, accuracy for each row of `index` (shape: samples x pages)."""
    p_weight = in_precision[index]
    r_weight = in_recall[index]
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (precision[index] * p_weight).sum(axis=1) / p_weight.sum(axis=1)
        r = (recall[index] * r_weight).sum(axis=1) / r_weight.sum(axis=1)
        f1 = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    f1 = np.where(np.isnan(p) | np.isnan(r), 0.0, f1)
    accuracy = exact[index].mean(axis=1)
    return p, r, f1, accuracy


def sample_std(values):
    values = values[~np.isnan(values)]
    if len(values) < 2:
        return None
    return float(np.std(values, ddof=1))


def model(dbt, session):
    dbt.config(materialized="table")
    seed = int(scoring_value("bootstrap_seed", dbt.config.get("bootstrap_seed")))
    samples = int(scoring_value("bootstrap_samples", dbt.config.get("bootstrap_samples")))
    check_bootstrap_vars(seed, samples, "bootstrap_seed", "bootstrap_samples")
    pages = (
        dbt.ref("int_extraction_pages_scored")
        .project(
            "run_id, system, position, item_id, page_precision, page_recall, "
            "tp + fp > 0 as in_precision, tp + fn > 0 as in_recall, exact_match"
        )
        .order("run_id, system, position, item_id")
        .to_arrow_table()
        .to_pylist()
    )
    groups = {}
    for page in pages:
        groups.setdefault((page["run_id"], page["system"]), []).append(page)

    rows = []
    for (run_id, system), group in sorted(groups.items()):
        precision = np.array([p["page_precision"] for p in group], dtype=float)
        recall = np.array([p["page_recall"] for p in group], dtype=float)
        in_precision = np.array([p["in_precision"] for p in group], dtype=float)
        in_recall = np.array([p["in_recall"] for p in group], dtype=float)
        exact = np.array([p["exact_match"] for p in group], dtype=float)
        stds = [None, None, None, None]
        if samples > 0:
            rng = group_rng(seed, run_id, system)
            parts = [
                corpus_metrics(precision, recall, in_precision, in_recall, exact, index)
                for index in resample_indices(rng, len(group), samples)
            ]
            metrics = [np.concatenate([part[k] for part in parts]) for k in range(4)]
            stds = [sample_std(values) for values in metrics]
        halfwidths = [None if std is None else 1.96 * std for std in stds]
        rows.append(
            {
                "run_id": run_id,
                "system": system,
                "n_pages": len(group),
                "bootstrap_seed": seed,
                "bootstrap_samples": samples,
                "shingle_precision_std": stds[0],
                "shingle_recall_std": stds[1],
                "shingle_f1_std": stds[2],
                "shingle_accuracy_std": stds[3],
                "shingle_precision_halfwidth_95": halfwidths[0],
                "shingle_recall_halfwidth_95": halfwidths[1],
                "shingle_f1_halfwidth_95": halfwidths[2],
                "shingle_accuracy_halfwidth_95": halfwidths[3],
            }
        )
    return pa.Table.from_pylist(rows, schema=SCHEMA)
