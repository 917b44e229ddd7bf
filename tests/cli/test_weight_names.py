"""The extraction weight names are listed once, as the keys of dbt var `extraction_weights`;
everything else that needs them reads them there or is held to them here."""

from __future__ import annotations

import re

import yaml

from bench.settings import DBT_PROJECT_DIR, default_scoring_vars


def test_names_come_from_dbt_project_vars() -> None:
    project = yaml.safe_load((DBT_PROJECT_DIR / "dbt_project.yml").read_text())
    names = tuple(project["vars"]["extraction_weights"])
    assert tuple(default_scoring_vars()["extraction_weights"]) == names  # what rescore validates
    assert {"shingle_precision", "shingle_recall", "shingle_f1"} <= set(names)
    # the seed composite's five terms at the published weights, the shingle terms at 0
    weights = project["vars"]["extraction_weights"]
    assert [weights[n] for n in ("completeness", "success", "f1", "latency", "throughput")] == [
        0.40,
        0.30,
        0.20,
        0.05,
        0.05,
    ]
    assert weights["shingle_f1"] == weights["shingle_precision"] == weights["shingle_recall"] == 0


def test_the_sql_components_name_exactly_those_weights() -> None:
    macro = (DBT_PROJECT_DIR / "macros" / "scoring_vars.sql").read_text()
    block = macro[macro.index("macro extraction_weight_components") :]
    block = block[: block.index("endmacro")]
    sql_map = dict(re.findall(r"'(\w+)': '(\w+)'", block))
    project = yaml.safe_load((DBT_PROJECT_DIR / "dbt_project.yml").read_text())
    assert tuple(sql_map) == tuple(project["vars"]["extraction_weights"])
