"""`bench rescore` input checks, lineage selection and the before/after table (bench/rescore.py,
transform/dbt_build.py). No dbt run: these are the rules in front of it."""

from __future__ import annotations

import math

import duckdb
import pytest
import yaml

from bench import rescore
from bench.settings import DBT_PROJECT_DIR
from transform.dbt_build import models_reading_vars
from warehouse import dbt_macros


def test_weight_names_are_the_dbt_var_defaults():
    with open(DBT_PROJECT_DIR / "dbt_project.yml", encoding="utf-8") as handle:
        defaults = yaml.safe_load(handle)["vars"]["extraction_weights"]
    assert rescore.extraction_weight_names() == tuple(defaults)
    with pytest.raises(ValueError) as error:
        rescore.parse_weights("speed=1")
    for name in defaults:  # the message lists every valid component
        assert name in str(error.value)


def test_the_weight_rule_is_the_dbt_macro_the_build_applies(monkeypatch, tmp_path):
    """parse_weights only reads NAME=NUMBER; whether a set is valid is decided by dbt's own
    macro (scoring_vars.sql:extraction_weights), evaluated in Python: an edit to the macro's
    rule is an edit to what the CLI and the app accept."""
    macro_file = DBT_PROJECT_DIR / "macros" / "scoring_vars.sql"
    relaxed = macro_file.read_text().replace("(total - 1) | abs > 1e-9", "(total - 1) | abs > 0.5")
    assert relaxed != macro_file.read_text()
    (tmp_path / "macros").mkdir()
    (tmp_path / "macros" / "scoring_vars.sql").write_text(relaxed)
    monkeypatch.setattr(dbt_macros, "DBT_PROJECT_DIR", tmp_path)
    assert rescore.parse_weights("completeness=0.7")["completeness"] == 0.7
    monkeypatch.undo()
    with pytest.raises(ValueError, match="must sum to 1"):
        rescore.parse_weights("completeness=0.7")


@pytest.mark.parametrize(
    ("spec", "rule"),
    [
        ("completeness=5", "in [0, 1]"),
        ("completeness=-0.1,success=1.1", "in [0, 1]"),
        ("completeness=nan", "finite number in [0, 1]"),
        ("completeness=inf", "finite number in [0, 1]"),
        ("completeness=0.5,completeness=0.5", "given twice"),
        ("completeness=0.5,success=0.2", "sum to 1"),
        ("completeness", "NAME=NUMBER"),
        ("completeness=abc", "not a number"),
        ("", "at least one"),
    ],
)
def test_bad_weights_are_refused_naming_the_rule(spec, rule):
    with pytest.raises(ValueError, match="--weights") as error:
        rescore.parse_weights(spec)
    assert rule in str(error.value)


def test_weights_replace_the_whole_set():
    weights = rescore.parse_weights("completeness=0.75,f1=0.25")
    assert weights == {
        name: {"completeness": 0.75, "f1": 0.25}.get(name, 0.0)
        for name in rescore.extraction_weight_names()
    }
    assert math.fsum(weights.values()) == 1


@pytest.mark.parametrize(
    ("spec", "rule"),
    [
        ("brave_search=-1", ">= 0"),
        ("brave_search=inf", ">= 0"),
        ("brave_search=nan", ">= 0"),
        ("brave_search=abc", "not a number"),
        ("brave_search=1,brave_search=2", "given twice"),
        ("brave_search", "LANE=USD_PER_1K"),
        ("=3", "LANE=USD_PER_1K"),
        (" , ", "at least one"),
    ],
)
def test_bad_lane_prices_are_refused_naming_the_rule(spec, rule):
    with pytest.raises(ValueError, match="--lane-prices") as error:
        rescore.parse_lane_prices(spec)
    assert rule in str(error.value)


def test_lane_prices_parse_per_lane():
    assert rescore.parse_lane_prices("brave_search=4.5, local-bm25=0") == {
        "brave_search": 4.5,
        "local-bm25": 0.0,
    }


def test_draco_overrides_must_name_registered_tasks_and_criteria(tmp_path):
    db = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create schema marts")
        con.execute(
            "create table marts.dim_rubric_criteria as "
            "select 'task-1' as item_id, 'crit-a' as criterion_id"
        )
    rescore.check_draco_overrides([{"item_id": "task-1", "criterion_id": "crit-a"}], db)
    with pytest.raises(ValueError, match="task 'task-9' is not registered"):
        rescore.check_draco_overrides([{"item_id": "task-9", "criterion_id": "crit-a"}], db)
    with pytest.raises(ValueError, match="no criterion 'crit-z'"):
        rescore.check_draco_overrides([{"item_id": "task-1", "criterion_id": "crit-z"}], db)
    with pytest.raises(ValueError, match="bench build"):
        rescore.check_draco_overrides([], tmp_path / "missing.duckdb")


def test_changed_vars_compare_values_in_effect():
    default_floor = rescore.dbt_var_defaults()["draco_penalty_floor"]
    assert rescore.changed_vars({}, {"draco_penalty_floor": default_floor}) == []
    assert rescore.changed_vars({}, {"draco_penalty_floor": -100}) == ["draco_penalty_floor"]
    assert rescore.changed_vars({"useful_success_threshold": 0.5}, {}) == [
        "useful_success_threshold"
    ]


def test_models_reading_vars_follow_macros_and_config():
    def node(name, raw="select 1", macros=(), config=None, kind="model"):
        return {
            "name": name,
            "resource_type": kind,
            "package_name": "bench",
            "raw_code": raw,
            "depends_on": {"macros": list(macros)},
            "unrendered_config": config or {},
        }

    manifest = {
        "metadata": {"project_name": "bench"},
        "macros": {
            "macro.bench.floor": {
                "macro_sql": "{{ var('draco_penalty_floor') }}",
                "depends_on": {"macros": []},
            },
            "macro.bench.weight": {
                "macro_sql": "{{ floor() }}",
                "depends_on": {"macros": ["macro.bench.floor"]},
            },
            "macro.bench.other": {"macro_sql": "{{ var('x') }}", "depends_on": {"macros": []}},
        },
        "nodes": {
            "a": node("weighted", macros=["macro.bench.weight"]),
            "b": node("direct", raw="{{ number_var('draco_penalty_floor', 0) }}"),
            "c": node("python", config={"seed": "{{ var('draco_penalty_floor') }}"}),
            "d": node("untouched", macros=["macro.bench.other"]),
            "e": node("a_test", raw="'draco_penalty_floor'", kind="test"),
        },
    }
    assert models_reading_vars(manifest, ["draco_penalty_floor"]) == [
        "direct",
        "python",
        "weighted",
    ]


def test_before_after_ranks_per_group():
    before = {"draco_leaderboard": {("r", "j", "a"): 0.5, ("r", "j", "b"): 0.4}}
    after = {"draco_leaderboard": {("r", "j", "a"): 0.3, ("r", "j", "b"): 0.4}}
    rows = rescore.before_after_rows(before, after)["draco_leaderboard"]
    assert rows == [(("r", "j"), "b", 2, 1, 0.4, 0.4), (("r", "j"), "a", 1, 2, 0.5, 0.3)]
    assert rescore.before_after_rows(before, before) == {}
    tables = rescore.before_after_tables(before, after)
    assert len(tables) == 1 and tables[0].row_count == 2
    # DRACO scores on the app's scale (points out of 100), not the mart's 0-1
    assert tables[0].columns[-1].header == "Score (points, 0–100)"
    assert list(tables[0].columns[-1].cells) == ["40.00 → 40.00", "50.00 → 30.00"]
