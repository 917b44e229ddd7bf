"""The dbt-duckdb Python models (dbt cannot unit test them), run against an in-memory DuckDB
through a stand-in for the `dbt` object and compared with the oracle."""

from __future__ import annotations

import importlib.util
import random
from collections import Counter

import bench_text
import duckdb
import extraction_oracle as oracle
import pytest
from dbt_harness import DBT_PROJECT

MODELS = DBT_PROJECT / "models" / "intermediate"


def load_model(name: str):
    spec = importlib.util.spec_from_file_location(name, next(MODELS.rglob(f"{name}.py")))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


normalized_model = load_model("int_extraction_outputs_normalized")
bootstrap_model = load_model("int_extraction_systems_bootstrapped")


class FakeConfig:
    def __init__(self, values: dict):
        self.values = values

    def __call__(self, **kwargs):
        return None

    def get(self, key, default=None):
        return self.values.get(key, default)


class FakeDbt:
    """What dbt-duckdb hands a Python model: ref() -> DuckDB relation, config.get()."""

    def __init__(self, con, config: dict | None = None):
        self.con = con
        self.config = FakeConfig(config or {})

    def ref(self, name: str):
        return self.con.table(name)


VOCAB = [
    "the",
    "a",
    "river",
    "salmon",
    "Größe",
    "café",
    "東京",
    "２０２４",
    "ﬁnal",
    "x_1",
    "42",
    "naïve",
]


def random_text(rng: random.Random, n: int) -> str:
    separators = [" ", "  ", "\n", "\t", ", ", ". ", "\u00a0", " — "]
    return "".join(rng.choice(VOCAB) + rng.choice(separators) for _ in range(n))


def text_pairs():
    rng = random.Random(20261130)
    pairs = [
        ("", ""),
        ("", "x"),
        ("x", ""),
        ("x", None),
        ("a b c", "a b c"),
        ("a a a a", "a"),
        ("a", "a a a a b b"),
        ("ﬁnal  figures", "final figures"),
        ("one two", "two one three one"),
    ]
    for _ in range(150):
        passage = random_text(rng, rng.randint(0, 40))
        kind = rng.random()
        if kind < 0.3:
            output = random_text(rng, rng.randint(0, 80))  # unrelated, often longer
        elif kind < 0.6:
            words = passage.split()
            output = " ".join(words[rng.randint(0, max(0, len(words) - 1)) :])  # a suffix
        else:
            output = random_text(rng, 5) + passage + random_text(rng, rng.randint(0, 30))  # padded
        pairs.append((passage, output))
    return pairs


@pytest.mark.parametrize(("passage", "output"), text_pairs())
def test_token_pieces_match_oracle(passage, output):
    # The pieces both extraction families score with (dbt_project/python/bench_text.py).
    text = bench_text
    norm_passage = text.normalize(passage)
    norm_output = text.normalize(output)
    assert norm_output == oracle.normalize(output)
    counts, passage_len = text.token_counts(norm_passage)
    output_tokens = text.WORD.findall(norm_output)
    recall = text.token_recall(counts, passage_len, Counter(output_tokens))
    precision = text.best_window_precision(counts, passage_len, output_tokens)
    for got, expected in (
        (recall, oracle.token_recall(passage, output)),
        (precision, oracle.window_precision(passage, output)),
    ):
        if expected is None:
            assert got is None
        else:
            assert got == pytest.approx(expected, abs=1e-12)


def test_normalized_model_end_to_end():
    pairs = text_pairs()
    with duckdb.connect() as con:
        con.execute(
            "create table int_extraction_pages_gridded (run_id varchar, system varchar, item_id varchar, "
            "ground_truth_text varchar, output_text varchar)"
        )
        con.executemany(
            "insert into int_extraction_pages_gridded values ('r', 's', ?, ?, ?)",
            [(f"i{n:03d}", passage, output) for n, (passage, output) in enumerate(pairs)],
        )
        table = normalized_model.model(FakeDbt(con), con)
    rows = {row["item_id"]: row for row in table.to_pylist()}
    assert table.schema == normalized_model.SCHEMA
    assert len(rows) == len(pairs)
    for n, (passage, output) in enumerate(pairs):
        row = rows[f"i{n:03d}"]
        assert row["normalizer_version"] == "nfkc-ws-1"
        assert row["normalized_output"] == oracle.normalize(output)
        assert row["normalized_output_chars"] == len(oracle.normalize(output))
        assert row["passage_tokens"] == len(oracle.tokenize(oracle.normalize(passage)))
        for column, expected in (
            ("token_recall", oracle.token_recall(passage, output)),
            ("window_precision", oracle.window_precision(passage, output)),
        ):
            if expected is None:
                assert row[column] is None, (n, column)
            else:
                assert row[column] == pytest.approx(expected, abs=1e-12), (n, column)


def _scored_pages(con, groups: dict[tuple[str, str], list[tuple[int, int, int, bool]]]):
    # the composite's per-page columns default to a completed engine page (its interval is
    # tested on its own below)
    con.execute(
        "create table int_extraction_pages_scored (run_id varchar, system varchar, position bigint, "
        "item_id varchar, tp double, fp double, fn double, page_precision double, page_recall double, "
        "exact_match boolean, outcome varchar default 'completed', run_source varchar default "
        "'engine', raw_success boolean default true, completeness double default 1.0, "
        "useful_success boolean default true, token_f1 double default 1.0, latency_ms double "
        "default 100, output_bytes bigint default 1000)"
    )
    for (run_id, system), pages in groups.items():
        for position, (tp, fp, fn, exact) in enumerate(pages):
            total = tp + fp + fn
            ntp, nfp, nfn = (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)
            con.execute(
                "insert into int_extraction_pages_scored (run_id, system, position, item_id, tp, fp, "
                "fn, page_precision, page_recall, exact_match) "
                "values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    run_id,
                    system,
                    position,
                    f"item{position:03d}",
                    ntp,
                    nfp,
                    nfn,
                    oracle.precision_score(ntp, nfp, nfn),
                    oracle.recall_score(ntp, nfp, nfn),
                    exact,
                ],
            )


def test_bootstrap_model_matches_oracle_and_is_deterministic():
    rng = random.Random(7)
    groups = {
        ("run-1", "alpha"): [
            (rng.randint(0, 9), rng.randint(0, 5), rng.randint(0, 5), rng.random() < 0.3)
            for _ in range(37)
        ],
        ("run-1", "beta"): [(0, 0, rng.randint(1, 5), False) for _ in range(10)]
        + [(3, 0, 0, True)],
        ("run-2", "alpha"): [(0, 0, 0, True), (2, 1, 1, False)],
        ("run-2", "empty"): [(0, 0, 4, False)] * 3,  # no predicted shingles: precision undefined
    }
    config = {"bootstrap_seed": "123", "bootstrap_samples": "400"}
    with duckdb.connect() as con:
        _scored_pages(con, groups)
        first = bootstrap_model.model(FakeDbt(con, config), con).to_pylist()
        again = bootstrap_model.model(FakeDbt(con, config), con).to_pylist()
        other_seed = bootstrap_model.model(
            FakeDbt(con, {**config, "bootstrap_seed": "124"}), con
        ).to_pylist()
    assert first == again
    assert first != other_seed
    by_key = {(row["run_id"], row["system"]): row for row in first}
    assert set(by_key) == set(groups)
    for (run_id, system), pages in groups.items():
        row = by_key[(run_id, system)]
        normalized = []
        for tp, fp, fn, exact in pages:
            total = tp + fp + fn
            normalized.append(
                (tp / total, fp / total, fn / total, exact) if total else (0.0, 0.0, 0.0, exact)
            )
        expected = oracle.bootstrap_std(
            normalized, seed=123, samples=400, run_id=run_id, system=system
        )
        assert row["n_pages"] == len(pages)
        assert (row["bootstrap_seed"], row["bootstrap_samples"]) == (123, 400)
        for metric in ("precision", "recall", "f1", "accuracy"):
            got = row[f"shingle_{metric}_std"]
            if expected[metric] is None:
                assert got is None, (run_id, system, metric)
            else:
                assert got == pytest.approx(expected[metric], rel=1e-9, abs=1e-12), (
                    run_id,
                    system,
                    metric,
                )
                assert row[f"shingle_{metric}_halfwidth_95"] == pytest.approx(1.96 * got)


def test_bootstrap_group_does_not_depend_on_other_groups():
    pages = [(3, 1, 0, False), (0, 0, 2, False), (5, 0, 0, True), (1, 2, 3, False)]
    config = {"bootstrap_seed": "99", "bootstrap_samples": "200"}
    with duckdb.connect() as con:
        _scored_pages(con, {("r", "a"): pages})
        alone = bootstrap_model.model(FakeDbt(con, config), con).to_pylist()
    with duckdb.connect() as con:
        _scored_pages(con, {("a-run-sorted-first", "z"): pages[:2], ("r", "a"): pages})
        together = bootstrap_model.model(FakeDbt(con, config), con).to_pylist()
    assert alone[0] == next(row for row in together if row["run_id"] == "r")


def test_bootstrap_with_zero_samples_has_no_std():
    with duckdb.connect() as con:
        _scored_pages(con, {("r", "a"): [(1, 0, 0, True), (0, 1, 1, False)]})
        rows = bootstrap_model.model(
            FakeDbt(con, {"bootstrap_seed": "1", "bootstrap_samples": "0"}), con
        ).to_pylist()
    assert rows[0]["shingle_f1_std"] is None and rows[0]["bootstrap_samples"] == 0


# The pages of the dbt unit test leaderboard_corpus_metrics_and_default_composite
# (models/marts/extraction/extraction_leaderboard.yml), whose leaderboard composite is 0.5524131783789283.
COMPOSITE_PAGES = [
    # outcome, page_precision, page_recall, completeness, raw_success, useful_success, token_f1,
    # latency_ms, output_bytes
    ("completed", 0.5, 1.0, 1.0, True, True, 0.5, 1000, 50000),
    ("completed", 1.0, 1.0, 0.5, True, True, 1.0, 3000, 150000),
    ("failed", 0.0, 0.0, 0.0, False, False, 0.0, 9000, None),
    ("completed", 1.0, 1.0, None, False, False, None, None, 0),
    ("missing", 0.0, 0.0, 0.0, False, False, 0.0, None, None),
]
SEED_WEIGHTS = {"completeness": 0.4, "success": 0.3, "f1": 0.2, "latency": 0.05, "throughput": 0.05}
COMPOSITE_CONFIG = {
    "bootstrap_seed": "5",
    "bootstrap_samples": "2000",
    "extraction_weights": SEED_WEIGHTS,
    "latency_scale_s": "10",
    "throughput_full_bytes": "100000",
}


def _composite_pages(con) -> None:
    con.execute(
        "create table int_extraction_pages_scored (run_id varchar, system varchar, position "
        "bigint, item_id varchar, tp double, fp double, fn double, page_precision double, "
        "page_recall double, exact_match boolean, outcome varchar, run_source varchar, "
        "raw_success boolean, completeness double, useful_success boolean, token_f1 double, "
        "latency_ms double, output_bytes bigint)"
    )
    for position, page in enumerate(COMPOSITE_PAGES):
        outcome, precision, recall, completeness, raw, useful, f1, latency, size = page
        tp = 1.0 if precision else 0.0
        con.execute(
            "insert into int_extraction_pages_scored values "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ["r1", "a", position, f"p{position}", tp, 1 - tp, 1 - tp, precision, recall,
             False, outcome, "engine", raw, completeness, useful, f1, latency, size],
        )  # fmt: skip


def test_bootstrap_composite_of_the_full_sample_is_the_leaderboards():
    """On the identity resample the model's composite is the SQL leaderboard's (the dbt unit
    test's expected 0.5524131783789283): same components, same NULL rules."""
    import numpy as np

    def column(values) -> np.ndarray:
        return np.array([np.nan if v is None else float(v) for v in values], dtype=float)

    pages = {
        "raw_success": column(p[4] for p in COMPOSITE_PAGES),
        "completeness": column(p[3] for p in COMPOSITE_PAGES),
        "useful_success": column(p[5] for p in COMPOSITE_PAGES),
        "token_f1": column(p[6] for p in COMPOSITE_PAGES),
        "latency_ms": column(p[7] if p[0] == "completed" else None for p in COMPOSITE_PAGES),
        "output_bytes": column(p[8] or 0 for p in COMPOSITE_PAGES),
    }
    index = np.arange(len(COMPOSITE_PAGES))[None, :]
    zero = np.array([0.0])
    (value,) = bootstrap_model.composite_values(
        pages, index, zero, zero, zero, bootstrap_model.weights_of(SEED_WEIGHTS), 10.0, 1e5
    )
    assert value == pytest.approx(0.5524131783789283, abs=1e-12)


def test_bootstrap_composite_interval_is_seeded_and_brackets_the_composite():
    text_weights = {**COMPOSITE_CONFIG, "extraction_weights": str(SEED_WEIGHTS)}
    with duckdb.connect() as con:
        _composite_pages(con)
        (row,) = bootstrap_model.model(FakeDbt(con, COMPOSITE_CONFIG), con).to_pylist()
        (again,) = bootstrap_model.model(FakeDbt(con, COMPOSITE_CONFIG), con).to_pylist()
        (other,) = bootstrap_model.model(
            FakeDbt(con, {**COMPOSITE_CONFIG, "bootstrap_seed": "6"}), con
        ).to_pylist()
        (as_text,) = bootstrap_model.model(FakeDbt(con, text_weights), con).to_pylist()
    assert row == again == as_text and row != other
    assert 0 <= row["composite_ci_low"] < 0.5524131783789283 < row["composite_ci_high"] <= 1


def test_mean_interval_driver_keeps_a_group_without_values_and_orders_by_key():
    """bench_stats.grouped_values + mean_interval_table, the driver of the per-group bootstrap
    models: a group whose rows all have no value keeps its row (n 0, no interval); the interval
    is bootstrap_mean_interval's for the group's own key; rows come out sorted by key."""
    import bench_stats
    import pyarrow as pa

    rows = [
        {"run": "r2", "lane": "b", "v": 1.0},
        {"run": "r1", "lane": "a", "v": None},
        {"run": "r2", "lane": "b", "v": 0.0},
        {"run": "r2", "lane": "b", "v": 1.0},
    ]
    groups = bench_stats.grouped_values(rows, ("run", "lane"), lambda row: row["v"])
    assert groups == {("r2", "b"): [1.0, 0.0, 1.0], ("r1", "a"): []}
    schema = pa.schema(
        [
            ("run", pa.string()),
            ("lane", pa.string()),
            ("n", pa.int64()),
            ("bootstrap_seed", pa.int64()),
            ("bootstrap_samples", pa.int64()),
            ("low", pa.float64()),
            ("high", pa.float64()),
        ]
    )
    table = bench_stats.mean_interval_table(groups, 7, 200, schema).to_pylist()
    low, high = bench_stats.bootstrap_mean_interval([1.0, 0.0, 1.0], 7, 200, ("r2", "b"))
    assert table == [
        {"run": "r1", "lane": "a", "n": 0, "bootstrap_seed": 7, "bootstrap_samples": 200}
        | {"low": None, "high": None},
        {"run": "r2", "lane": "b", "n": 3, "bootstrap_seed": 7, "bootstrap_samples": 200}
        | {"low": low, "high": high},
    ]
    assert 0.0 <= low < high <= 1.0
