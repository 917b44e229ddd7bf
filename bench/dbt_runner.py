"""Run dbt as a subprocess: an in-process dbtRunner keeps the DuckDB file locked afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.settings import DBT_PROJECT_DIR
from warehouse.paths import BenchPaths


class DbtError(RuntimeError):
    pass


def dbt_env(paths: BenchPaths, warehouse_db: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        BENCH_DUCKDB_PATH=str(warehouse_db or paths.warehouse_db),
        DBT_TARGET_PATH=str(paths.dbt_dir / "target"),
        DBT_LOG_PATH=str(paths.dbt_dir / "logs"),
        DBT_PROFILES_DIR=str(DBT_PROJECT_DIR),
        # DuckDB spills here past its memory limit (profiles.yml), beside the warehouse.
        BENCH_DBT_TEMP_DIR=str(paths.dbt_dir / "duckdb_tmp"),
        BENCH_DBT_MODULE_PATH=str(DBT_PROJECT_DIR / "python"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        DBT_USE_COLORS="false",  # errors are re-printed by bench; escape codes would garble them
    )
    return env


def dbt_executable() -> str:
    candidate = Path(sys.executable).with_name("dbt")
    return str(candidate) if candidate.exists() else "dbt"


def run_dbt(
    paths: BenchPaths,
    command: list[str],
    *,
    dbt_vars: dict[str, Any] | None = None,
    warehouse_db: Path | None = None,
    quiet: bool = True,
) -> str:
    args = [dbt_executable(), *command, "--project-dir", str(DBT_PROJECT_DIR)]
    if dbt_vars:
        args += ["--vars", json.dumps(dbt_vars, sort_keys=True)]
    if quiet:
        args.append("--quiet")
    proc = subprocess.run(args, env=dbt_env(paths, warehouse_db), capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise DbtError(
            f"dbt {' '.join(command)} failed (exit {proc.returncode}):\n{output.strip()}"
        )
    return output
