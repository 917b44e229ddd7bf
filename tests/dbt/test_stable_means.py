"""Means that `bench rebuild` reproduces to the bit.

DuckDB's avg() over doubles sums in parallel chunks, so two builds of the same events can differ
in the last bits (live_extraction_leaderboard.token_f1 did: 0.7662839278580773 against ...776),
and a rebuild then reports a mart as changed. A mean of floats goes through the stable_avg macro
(a list summed in item order); a plain avg() is left only where the sum is exact whatever the
order: 0/1 indicators and integer columns.
"""

from __future__ import annotations

import re
from pathlib import Path

MODELS = Path(__file__).resolve().parents[2] / "dbt_project" / "models"

# avg(<argument>) whose sum is exact in any order
EXACT_MEANS = (
    re.compile(r"case when \w+ then 1\.0 else 0\.0 end"),  # a 0/1 indicator
    re.compile(r"output_bytes"),  # bigint: DuckDB sums integers exactly
)


def plain_means(sql: str) -> list[str]:
    code = "\n".join(line.split("--", 1)[0] for line in sql.splitlines())
    return re.findall(r"\bavg\(((?:[^()]|\([^()]*\))*)\)", code)


def test_every_model_mean_of_floats_is_stable():
    unstable = [
        f"{path.relative_to(MODELS)}: avg({argument})"
        for path in sorted(MODELS.rglob("*.sql"))
        for argument in plain_means(path.read_text(encoding="utf-8"))
        if not any(rule.fullmatch(argument.strip()) for rule in EXACT_MEANS)
    ]
    assert not unstable, "use {{ stable_avg(...) }} (macros/stable_avg.sql):\n" + "\n".join(
        unstable
    )


def test_the_check_finds_a_plain_mean_of_floats():
    sql = "select avg(coalesce(token_f1, 0.0)) filter (where x) -- avg(ignored)\nfrom t"
    assert plain_means(sql) == ["coalesce(token_f1, 0.0)"]
