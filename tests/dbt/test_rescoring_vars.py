"""Rescoring is `dbt run` with new vars: no event changes, new weights/thresholds/seed everywhere."""

from __future__ import annotations

import json
import shutil

import pytest
from dbt_harness import BuiltWarehouse, run_dbt
from extraction_expected import close, expected_bootstrap, expected_leaderboard, expected_pages

from warehouse.scoring_vars import parse_weights

pytestmark = pytest.mark.slow

NEW_VARS = {
    "extraction_weights": {
        "completeness": 0.1,
        "success": 0.1,
        "f1": 0.4,
        "latency": 0.1,
        "throughput": 0.1,
        "shingle_precision": 0.0,
        "shingle_recall": 0.0,
        "shingle_f1": 0.2,
    },
    "useful_success_threshold": 0.9,
    "bootstrap_seed": 7,
    "bootstrap_samples": 200,
    "latency_scale_s": 2,
    "throughput_full_bytes": 5000,
    "non_content_rules_version": "1",
}


@pytest.fixture(scope="module")
def rescored(built_warehouse, tmp_path_factory) -> BuiltWarehouse:
    work = tmp_path_factory.mktemp("dbt_rescore")
    path = work / "warehouse.duckdb"
    shutil.copy(built_warehouse.path, path)
    result = run_dbt(
        ["run", "--select", "int_extraction_pages_scored+", "dim_scoring_vars"],
        path,
        work,
        NEW_VARS,
    )
    return BuiltWarehouse(path, work, built_warehouse.run_ids, result.stdout)


def test_scoring_vars_are_recorded(rescored):
    rows = {
        row["var_name"]: json.loads(row["var_value"])
        for row in rescored.rows(
            "select var_name, var_value::varchar as var_value from marts.dim_scoring_vars"
        )
    }
    assert {name: rows[name] for name in NEW_VARS} == NEW_VARS


def test_leaderboard_is_rescored(rescored, built_warehouse):
    pages = expected_pages()
    expected = expected_leaderboard(pages, NEW_VARS)
    rows = {
        (row["run_id"], row["system"]): row
        for row in rescored.rows("select * from marts.extraction_leaderboard")
    }
    before = {
        (row["run_id"], row["system"]): row
        for row in built_warehouse.rows("select * from marts.extraction_leaderboard")
    }
    for (run, system), want in expected.items():
        key = (rescored.run_ids[run], system)
        row = rows[key]
        for column in (
            "composite",
            "useful_success_rate",
            "latency_score",
            "throughput_score",
            "rank_composite",
        ):
            assert close(row[column], want[column]), (
                run,
                system,
                column,
                row[column],
                want[column],
            )
        assert (row["w_f1"], row["w_shingle_f1"], row["useful_success_threshold"]) == (
            0.4,
            0.2,
            0.9,
        )
        # the shingle metric does not depend on any var
        for column in ("shingle_precision", "shingle_recall", "shingle_f1", "shingle_accuracy"):
            assert close(row[column], before[key][column]), (run, system, column)
    edge_alpha = [p for p in pages if p.run == "edge" and p.system == "alpha"]
    run_id = rescored.run_ids["edge"]
    want = expected_bootstrap(edge_alpha, run_id, "alpha", seed=7, samples=200)
    row = rows[(run_id, "alpha")]
    assert (row["bootstrap_seed"], row["bootstrap_samples"]) == (7, 200)
    for metric, value in want.items():
        assert close(row[f"shingle_{metric}_std"], value), metric


def test_page_useful_success_follows_the_threshold(rescored):
    counts = rescored.query(
        "select count(*) filter (where useful_success) as useful, "
        "count(*) filter (where useful_success and completeness < 0.9) as below "
        "from marts.fct_extraction_pages"
    ).iloc[0]
    assert counts.useful > 0 and counts.below == 0


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"completeness": 1, "boilerplate": 1}, "var extraction_weights: unknown weight(s) boilerplate"),
        # the macro bench rescore and the app evaluate too (warehouse.scoring_vars.parse_weights)
        ({"completeness": 1.5}, "extraction_weights: completeness=1.5: each weight must be a finite number in [0, 1]"),
        ({"completeness": 0.5, "success": 0.3}, "the weights must sum to 1 (they sum to 0.8)"),
    ],
)  # fmt: skip
def test_invalid_weights_fail_with_a_readable_message(built_warehouse, tmp_path, weights, message):
    path = tmp_path / "warehouse.duckdb"
    shutil.copy(built_warehouse.path, path)
    with pytest.raises(AssertionError) as failure:
        run_dbt(
            ["run", "--select", "dim_scoring_vars"], path, tmp_path, {"extraction_weights": weights}
        )
    assert message in str(failure.value)
    with pytest.raises(ValueError):  # and bench rescore refuses the same set
        parse_weights(",".join(f"{name}={value}" for name, value in weights.items()))
