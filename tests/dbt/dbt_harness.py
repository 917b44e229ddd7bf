"""Running dbt from tests: paths, the call and a handle on a built warehouse.

dbt runs in the test process as bench runs it (transform/dbt_invoke.py: the parsed project kept
between calls, the DuckDB file closed after each), with BENCH_DUCKDB_PATH, DBT_TARGET_PATH and
DBT_LOG_PATH inside tmp_path. A full build still costs seconds, so the suite shares one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb

# Builds here leave the dbt unit tests out, as a user's `bench build` does: they run once, through
# `bench test` (tests/cli/test_bench_test_cmd.py).
from transform.dbt_build import NO_UNIT_TESTS  # noqa: F401 (re-exported for the tests)
from transform.dbt_invoke import invoke_dbt

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DBT_PROJECT = REPO / "dbt_project"
# The Python models import the shared statistics module (profiles.yml module_paths).
STATS_MODULE_DIR = DBT_PROJECT / "python"
if str(STATS_MODULE_DIR) not in sys.path:
    sys.path.insert(0, str(STATS_MODULE_DIR))
# the dbt next to the running interpreter (the project venv), else whatever is on PATH
DBT = Path(sys.executable).with_name("dbt")
if not DBT.exists():
    DBT = Path(shutil.which("dbt") or "dbt")


def run_dbt(
    args: list[str], db_path: Path, work: Path, vars_: dict | None = None
) -> subprocess.CompletedProcess:
    # dbt runs beside the file, named relatively, as bench runs it: the connection settings
    # are then the same for every test, and so dbt's saved parse (transform/dbt_parse_cache.py).
    env = {
        **os.environ,
        "BENCH_DUCKDB_PATH": db_path.name,
        "BENCH_DBT_TEMP_DIR": "dbt/duckdb_tmp",
        "DBT_TARGET_PATH": str(work / "target"),
        "DBT_LOG_PATH": str(work / "logs"),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DBT_PROFILES_DIR": str(DBT_PROJECT),
        "BENCH_DBT_MODULE_PATH": str(STATS_MODULE_DIR),
    }
    cmd = [*args, "--project-dir", str(DBT_PROJECT)]
    if vars_:
        cmd += ["--vars", json.dumps(vars_)]
    # DuckDB creates its temp directory on the first spill, but not the folder above it: a
    # missing one is an IOException in the middle of a model (bench's data root has it).
    (db_path.parent / "dbt").mkdir(exist_ok=True)
    result = invoke_dbt(cmd, env, db_path.parent)
    if not result.success:
        raise AssertionError(f"dbt {' '.join(cmd)} failed:\n{result.output[-6000:]}")
    return subprocess.CompletedProcess(cmd, 0, stdout=result.output, stderr="")


@dataclass
class BuiltWarehouse:
    path: Path
    work: Path
    run_ids: dict[str, str]
    build_output: str

    def query(self, sql: str, params: list | None = None):
        with duckdb.connect(str(self.path), read_only=True) as con:
            return con.execute(sql, params or []).df()

    def rows(self, sql: str, params: list | None = None) -> list[dict]:
        with duckdb.connect(str(self.path), read_only=True) as con:
            cursor = con.execute(sql, params or [])
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
