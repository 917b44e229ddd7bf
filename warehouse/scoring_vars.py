"""Scoring-var rules both `bench rescore` and the app's what-if panels apply: one validator, so a
panel can never print a command the CLI refuses.

The valid extraction weight names come from ONE place, the default of var `extraction_weights`
in dbt_project/dbt_project.yml (the composite's SQL validates the same keys). Here, not in
bench/, because the app may import only `warehouse` (import-linter).
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

import yaml

# The same directory bench.settings.DBT_PROJECT_DIR names: dbt_project/ ships beside warehouse/.
DBT_PROJECT_DIR = Path(__file__).resolve().parent.parent / "dbt_project"

WEIGHT_TOLERANCE = 1e-9


@cache
def dbt_var_defaults(project_dir: Path = DBT_PROJECT_DIR) -> dict[str, Any]:
    with open(project_dir / "dbt_project.yml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)["vars"]


def extraction_weight_names() -> tuple[str, ...]:
    """The composite's components, in the order dbt_project.yml lists them."""
    return tuple(dbt_var_defaults()["extraction_weights"])


def parse_weights(spec: str) -> dict[str, float]:
    """`completeness=0.5,success=0.5` -> the whole new weight set (components left out are 0).

    Refused, naming the rule: an unknown name, a name given twice, a value that is not a finite
    number in [0, 1], and a set that does not sum to 1."""
    names = extraction_weight_names()
    given: dict[str, float] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not name:
            raise ValueError(f"--weights: {part!r}: expected NAME=NUMBER")
        if name not in names:
            raise ValueError(
                f"--weights: unknown weight {name!r}; the composite's components are "
                f"{', '.join(names)} (var extraction_weights in dbt_project.yml)"
            )
        if name in given:
            raise ValueError(f"--weights: {name} is given twice")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"--weights: {name}={value!r} is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"--weights: {name}={value}: a weight must be a finite number")
        if not 0 <= number <= 1:
            raise ValueError(f"--weights: {name}={value}: each weight must be in [0, 1]")
        given[name] = number
    if not given:
        raise ValueError("--weights: give at least one NAME=NUMBER")
    total = math.fsum(given.values())
    if abs(total - 1) > WEIGHT_TOLERANCE:
        raise ValueError(
            f"--weights: the weights must sum to 1 (they sum to {total:g}); --weights replaces "
            f"the whole set, a component left out weighs 0"
        )
    return {name: given.get(name, 0.0) for name in names}
