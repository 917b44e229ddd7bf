"""The statistics every dbt Python model uses: one seeded bootstrap, paired tests, Holm/Bonferroni.

On the Python path of dbt's process through `module_paths` in profiles.yml. Models pass in
per-item (or per-page, per-question) values, never verdict-level rows.

Determinism: a group draws from its own generator,
    numpy.random.default_rng([seed, first 8 bytes of sha256("\\x1f".join(key))]),
so a group's result depends only on the seed and its own values: rebuilding from the log, or
adding another run, never moves it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

ALPHA = 0.05
CORRECTIONS = ("bonferroni", "holm")
# Resample indices are drawn in blocks of at most this many cells, to bound memory on large
# groups. The block size depends only on the group size, so the draws are the same every build
# (a group smaller than MAX_INDEX_CELLS / samples is drawn in one block).
MAX_INDEX_CELLS = 4_000_000


def check_bootstrap_vars(seed: int, samples: int, seed_name: str, samples_name: str) -> None:
    if seed < 0 or samples < 0:
        raise ValueError(f"{seed_name} and {samples_name} must be >= 0; got {seed} and {samples}")


def bootstrap_vars(**configured: Any) -> tuple[int, int]:
    """(seed, samples) in effect and checked, from a model's `name=dbt.config.get(name)` pair,
    seed first: `bootstrap_vars(qa_bootstrap_seed=dbt.config.get("qa_bootstrap_seed"),
    qa_bootstrap_samples=dbt.config.get("qa_bootstrap_samples"))`. The model itself must read
    each name (bench_vars.scoring_value says why)."""
    # Imported here: bench_vars is on dbt's module path only, and the app imports this module
    # as dbt_project.python.bench_stats for its paired tests (app/data/compare.py).
    from bench_vars import scoring_value

    (seed_name, seed), (samples_name, samples) = configured.items()
    seed = int(scoring_value(seed_name, seed))
    samples = int(scoring_value(samples_name, samples))
    check_bootstrap_vars(seed, samples, seed_name, samples_name)
    return seed, samples


def check_correction(correction: str, var_name: str) -> str:
    if correction not in CORRECTIONS:
        raise ValueError(f"var {var_name} must be bonferroni or holm; got {correction!r}")
    return correction


def group_rng(seed: int, *key: str) -> np.random.Generator:
    digest = hashlib.sha256("\x1f".join(key).encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])


def resample_indices(rng: np.random.Generator, n: int, samples: int) -> Iterator[np.ndarray]:
    """`samples` resamples of range(n) with replacement, as (block, n) index arrays."""
    block = max(1, MAX_INDEX_CELLS // max(n, 1))
    for start in range(0, samples, block):
        yield rng.integers(0, n, size=(min(block, samples - start), n))


def bootstrap_mean_interval(
    values: Sequence[float], seed: int, samples: int, key: Sequence[str]
) -> tuple[float | None, float | None]:
    """Percentile 95 % interval of the mean (numpy linear interpolation); no values or 0
    samples -> (None, None)."""
    if samples <= 0 or len(values) == 0:
        return None, None
    data = np.asarray(values, dtype=float)
    rng = group_rng(seed, *key)
    means = np.concatenate(
        [data[index].mean(axis=1) for index in resample_indices(rng, len(data), samples)]
    )
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def grouped_values(
    rows: Iterable[dict[str, Any]],
    key: Sequence[str],
    value: Callable[[dict[str, Any]], float | None],
) -> dict[tuple, list[float]]:
    """{(row[k] for k in key): [value(row), ...]} in row order; a row whose value is None is
    left out, but its group is kept (so a group with no values still gets its row)."""
    groups: dict[tuple, list[float]] = {}
    for row in rows:
        values = groups.setdefault(tuple(row[k] for k in key), [])
        if (found := value(row)) is not None:
            values.append(found)
    return groups


def mean_interval_table(
    groups: dict[tuple, list[float]], seed: int, samples: int, schema: pa.Schema
) -> pa.Table:
    """One row per group, by key: the key columns, the value count, bootstrap_seed,
    bootstrap_samples and the bootstrap_mean_interval, in `schema`'s order (the key's columns
    first, then those five)."""
    *key_names, n_name, seed_name, samples_name, low_name, high_name = schema.names
    rows = []
    for key, values in sorted(groups.items()):
        low, high = bootstrap_mean_interval(values, seed, samples, key)
        rows.append(
            {
                **dict(zip(key_names, key, strict=True)),
                n_name: len(values),
                seed_name: seed,
                samples_name: samples,
                low_name: low,
                high_name: high,
            }
        )
    return pa.Table.from_pylist(rows, schema=schema)


def _finite(value) -> float | None:
    return None if value is None or np.isnan(value) else float(value)


def paired_ttest(a: Sequence[float], b: Sequence[float]) -> tuple[float | None, float | None]:
    """(t, p) of scipy.stats.ttest_rel(a, b), two-sided; identical vectors (or a NaN p) ->
    (None, 1.0); fewer than 2 pairs -> (None, None): not tested."""
    if len(a) < 2:
        return None, None
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if np.array_equal(x, y):
        return None, 1.0
    from scipy import stats  # imported here: the bootstrap-only models never pay its 0.6 s

    result = stats.ttest_rel(x, y)
    p = _finite(result.pvalue)
    if p is None:
        return None, 1.0
    return _finite(result.statistic), p


def paired_wilcoxon(a: Sequence[float], b: Sequence[float]) -> tuple[float | None, float | None]:
    """(W, p) of scipy.stats.wilcoxon(a, b) (zero_method wilcox, two-sided); identical vectors
    -> (None, 1.0); fewer than 2 pairs, or scipy refusing the data -> (None, None)."""
    if len(a) < 2:
        return None, None
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if np.array_equal(x, y):
        return None, 1.0
    from scipy import stats

    try:
        result = stats.wilcoxon(x, y)
    except ValueError:
        return None, None
    return _finite(result.statistic), _finite(result.pvalue)


def adjust(p_values: Sequence[float | None], correction: str) -> list[float | None]:
    """Family-wise adjusted p-values in input order (equal to statsmodels multipletests):
    bonferroni min(1, p m) or holm step-down, m = the tested members. None (not tested) stays
    None and is not counted in m."""
    tested = [i for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    m = len(tested)
    if m == 0:
        return out
    p = np.asarray([p_values[i] for i in tested], dtype=float)
    if correction == "bonferroni":
        adjusted = np.minimum(1.0, p * m)
    elif correction == "holm":
        order = np.argsort(p, kind="stable")
        stepped = np.maximum.accumulate(p[order] * np.arange(m, 0, -1))
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(1.0, stepped)
    else:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}; got {correction!r}")
    for i, value in zip(tested, adjusted, strict=True):
        out[i] = float(value)
    return out
