"""Scoring-var rules both `bench rescore` and the app's what-if panels apply: one validator, so a
panel can never print a command the CLI refuses, and that validator is dbt's own macro.

The valid extraction weight names come from ONE place, the default of var `extraction_weights`
in dbt_project/dbt_project.yml; what makes a weight set valid is the macro the build applies
(macros/scoring_vars.sql:extraction_weights), called through warehouse.dbt_macros. Here, not in
bench/, because the app may import only `warehouse` (import-linter).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from warehouse.dbt_macros import DBT_PROJECT_DIR, MacroError, call_macro


@cache
def dbt_var_defaults(project_dir: Path = DBT_PROJECT_DIR) -> dict[str, Any]:
    with open(project_dir / "dbt_project.yml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)["vars"]


def extraction_weight_names() -> tuple[str, ...]:
    """The composite's components, in the order dbt_project.yml lists them."""
    return tuple(dbt_var_defaults()["extraction_weights"])


def parse_weights(spec: str) -> dict[str, float]:
    """`completeness=0.5,success=0.5` -> the whole new weight set (components left out are 0).

    This reads the command line's syntax (NAME=NUMBER, each name once); whether the set is a
    valid weighting is the dbt macro's rule (macros/scoring_vars.sql:extraction_weights, what
    the build applies), evaluated here: an unknown name, a weight outside [0, 1] and a set that
    does not sum to 1 are refused with its message."""
    given: dict[str, float] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not name:
            raise ValueError(f"--weights: {part!r}: expected NAME=NUMBER")
        if name in given:
            raise ValueError(f"--weights: {name} is given twice")
        try:
            given[name] = float(value)
        except ValueError:
            raise ValueError(f"--weights: {name}={value!r} is not a number") from None
    if not given:
        raise ValueError("--weights: give at least one NAME=NUMBER")
    try:
        weights = call_macro(
            "scoring_vars.sql", "extraction_weights", variables={"extraction_weights": given}
        )
    except MacroError as refused:
        raise ValueError(f"--weights: {refused}") from None
    return {name: float(weights[name]) for name in extraction_weight_names()}
