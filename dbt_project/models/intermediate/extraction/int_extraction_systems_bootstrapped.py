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

Composite interval: from the same resamples, the composite under the active weights
(var extraction_weights, the formula of extraction_leaderboard: each component recomputed on
the resample as the leaderboard computes it over all pages, a component that cannot be
measured counts 0) and its 2.5th / 97.5th percentiles (numpy linear interpolation), as the QA
and DRACO intervals are taken.

Grain: one row per (run_id, system) of int_extraction_pages_scored.
"""

import ast
import json
import math

import numpy as np
import pyarrow as pa
from bench_stats import bootstrap_vars, group_rng, resample_indices
from bench_vars import scoring_value

# extraction_weight_components (macros/scoring_vars.sql): weight name -> leaderboard component
COMPONENTS = (
    "completeness",
    "success",
    "f1",
    "latency",
    "throughput",
    "shingle_precision",
    "shingle_recall",
    "shingle_f1",
)

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
        ("composite_ci_low", pa.float64()),
        ("composite_ci_high", pa.float64()),
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


PAGE_COLUMNS = (
    "raw_success",
    "completeness",
    "useful_success",
    "token_f1",
    "latency_ms",
    "output_bytes",
)


def weights_of(configured) -> dict[str, float]:
    """The active weights, every component present (a name left out weighs 0). dbt may hand a
    yml config's rendered mapping over as its text."""
    if isinstance(configured, str):
        try:
            configured = json.loads(configured)
        except ValueError:
            configured = ast.literal_eval(configured)
    configured = configured or {}
    return {name: float(configured.get(name, 0) or 0) for name in COMPONENTS}


def nan_mean(values, index):
    """Row means of values[index] ignoring NaN (SQL avg ignores NULL); NaN when all are."""
    picked = values[index]
    present = ~np.isnan(picked)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(present, picked, 0.0).sum(axis=1) / present.sum(axis=1)


def composite_values(pages, index, p, r, f1, weights, latency_scale_s, full_bytes):
    """The composite of each resample (rows of `index`), as extraction_leaderboard computes it."""
    completeness = nan_mean(
        np.where(pages["raw_success"] == 1, pages["completeness"], np.nan), index
    )
    latency = pages["latency_ms"][index]
    with np.errstate(invalid="ignore"):
        p95 = np.full(len(index), np.nan)
        timed = ~np.isnan(latency).all(axis=1)
        if timed.any():
            p95[timed] = np.nanquantile(latency[timed], 0.95, axis=1) / 1000.0
    with np.errstate(invalid="ignore", divide="ignore"):
        parts = {
            "completeness": completeness,
            "success": nan_mean(pages["useful_success"], index),
            "f1": nan_mean(pages["token_f1"], index),
            "latency": np.exp(-p95 / latency_scale_s),
            "throughput": np.minimum(nan_mean(pages["output_bytes"], index) / full_bytes, 1.0),
            "shingle_precision": p,
            "shingle_recall": r,
            "shingle_f1": f1,
        }
    total = np.zeros(len(index))
    for name, weight in weights.items():
        if weight:
            total += float(weight) * np.nan_to_num(parts[name], nan=0.0)
    return total


def sample_std(values):
    values = values[~np.isnan(values)]
    if len(values) < 2:
        return None
    return float(np.std(values, ddof=1))


def model(dbt, session):
    dbt.config(materialized="table")
    seed, samples = bootstrap_vars(
        bootstrap_seed=dbt.config.get("bootstrap_seed"),
        bootstrap_samples=dbt.config.get("bootstrap_samples"),
    )
    configured = scoring_value("extraction_weights", dbt.config.get("extraction_weights"))
    # no weights configured (a caller other than dbt): no composite interval
    weights = None if configured is None else weights_of(configured)
    latency_scale_s = scoring_value("latency_scale_s", dbt.config.get("latency_scale_s"))
    full_bytes = scoring_value("throughput_full_bytes", dbt.config.get("throughput_full_bytes"))
    pages = (
        dbt.ref("int_extraction_pages_scored")
        .project(
            "run_id, system, position, item_id, page_precision, page_recall, "
            "tp + fp > 0 as in_precision, tp + fn > 0 as in_recall, exact_match, "
            "cast(raw_success as double) as raw_success, completeness, "
            "cast(useful_success as double) as useful_success, token_f1, "
            "case when outcome = 'completed' and run_source = 'engine' then latency_ms end "
            "as latency_ms, cast(coalesce(output_bytes, 0) as double) as output_bytes"
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
        columns = {
            name: np.array([math.nan if p[name] is None else p[name] for p in group], dtype=float)
            for name in PAGE_COLUMNS
        }
        stds = [None, None, None, None]
        composite_ci = (None, None)
        if samples > 0:
            rng = group_rng(seed, run_id, system)
            parts = []
            composites = []
            for index in resample_indices(rng, len(group), samples):
                part = corpus_metrics(precision, recall, in_precision, in_recall, exact, index)
                parts.append(part)
                if weights is None:
                    continue
                composites.append(
                    composite_values(
                        columns, index, part[0], part[1], part[2], weights,
                        float(latency_scale_s),
                        float(full_bytes),
                    )
                )  # fmt: skip
            metrics = [np.concatenate([part[k] for part in parts]) for k in range(4)]
            stds = [sample_std(values) for values in metrics]
            if composites:
                low, high = np.percentile(np.concatenate(composites), [2.5, 97.5])
                composite_ci = (float(low), float(high))
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
                "composite_ci_low": composite_ci[0],
                "composite_ci_high": composite_ci[1],
            }
        )
    return pa.Table.from_pylist(rows, schema=SCHEMA)
