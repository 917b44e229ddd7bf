"""The scoring vars in effect, for the Python models.

`bench` passes the active scoring vars as JSON in the environment (BENCH_SCORING_VARS), read
only when a model runs, never while dbt parses: dbt re-parses every file that reads an
environment variable whose value changed, and a full re-parse whenever --vars change, so either
way a rescore would pay for a parse. A model's yml config carries the var's value from
dbt_project.yml (or --vars); the environment's value, when there is one, wins. The SQL models do
the same through the scoring_var macro (macros/scoring_vars.sql).
"""

from __future__ import annotations

import json
import os
from typing import Any


def scoring_value(name: str, configured: Any) -> Any:
    """`configured` is the model's `dbt.config.get(name)`: dbt includes in a Python model only
    the config keys it sees read by name in the model itself."""
    active = json.loads(os.environ.get("BENCH_SCORING_VARS") or "{}")
    return active.get(name, configured)
