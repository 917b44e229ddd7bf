"""Every read of a scoring var goes through the one place that sees the active values.

`bench` passes the active scoring vars in the environment (BENCH_SCORING_VARS); a model that
reads one with plain `var()` silently scores with the dbt_project.yml default after a rescore
(this happened to every numeric var once: `number_var` read `var(name)`). So: in the SQL models
and macros, `var(` appears only inside the `scoring_var` macro; in the Python models, every
`dbt.config.get(...)` of a scoring var is wrapped in `scoring_value`, or handed by name to
bench_stats.bootstrap_vars, which wraps it."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

DBT = Path(__file__).resolve().parents[2] / "dbt_project"
SCORING_VARS = set(yaml.safe_load((DBT / "dbt_project.yml").read_text())["vars"])


def _code(sql: str) -> str:
    """The Jinja/SQL without comments (documentation may name var('x'))."""
    sql = re.sub(r"\{#.*?#\}", "", sql, flags=re.S)
    return re.sub(r"--[^\n]*", "", sql)


def test_sql_reads_scoring_vars_only_through_scoring_var():
    offenders = []
    for path in sorted([*DBT.glob("models/**/*.sql"), *DBT.glob("macros/*.sql")]):
        code = _code(path.read_text(encoding="utf-8"))
        if path.name == "scoring_vars.sql":  # the macro itself may call var()
            code = re.sub(r"\{% macro scoring_var\(.*?\{%- endmacro %\}", "", code, flags=re.S)
        offenders += [f"{path.relative_to(DBT)}: {m}" for m in re.findall(r"(?<![\w.])var\(", code)]
    assert offenders == []


def test_python_models_read_scoring_vars_through_scoring_value():
    offenders = []
    for path in sorted(DBT.glob("models/**/*.py")):
        code = path.read_text(encoding="utf-8")
        for name in re.findall(r'dbt\.config\.get\("(\w+)"\)', code):
            wrapped = f'scoring_value("{name}", dbt.config.get("{name}"))' in code
            to_bootstrap_vars = f'{name}=dbt.config.get("{name}")' in code and (
                "bootstrap_vars(" in code
            )
            if name in SCORING_VARS and not (wrapped or to_bootstrap_vars):
                offenders.append(f"{path.relative_to(DBT)}: {name}")
    assert offenders == []
