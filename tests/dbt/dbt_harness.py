"""Running dbt from tests: paths, the subprocess call and a handle on a built warehouse.

dbt runs as a subprocess (never in-process: dbtRunner keeps the DuckDB file locked), with
BENCH_DUCKDB_PATH, DBT_TARGET_PATH and DBT_LOG_PATH inside tmp_path. Each invocation costs
~5-10 s, so the suite shares one build.
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

# The session's fixture warehouse (fixture_warehouse.py) runs every dbt unit test once; the
# partial builds of single tests leave them out, as a user's `bench build` does.
from transform import dbt_parse_cache
from transform.dbt_build import NO_UNIT_TESTS  # noqa: F401 (re-exported for the tests)

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
        "BENCH_DBT_MODULE_PATH": str(STATS_MODULE_DIR),
    }
    cmd = [str(DBT), *args, "--project-dir", str(DBT_PROJECT), "--profiles-dir", str(DBT_PROJECT)]
    if vars_:
        cmd += ["--vars", json.dumps(vars_)]
    # DuckDB creates its temp directory on the first spill, but not the folder above it: a
    # missing one is an IOException in the middle of a model (bench's data root has it).
    (db_path.parent / "dbt").mkdir(exist_ok=True)
    target, cached = work / "target", dbt_parse_cache.cached_parse(env, cmd, DBT_PROJECT)
    dbt_parse_cache.restore(target, cached)
    try:
        result = subprocess.run(
            cmd, env=env, cwd=db_path.parent, capture_output=True, text=True, timeout=600
        )
    finally:
        dbt_parse_cache.save(target, cached)
    if result.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed (rc={result.returncode}):\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"
        )
    return result


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
