"""dbt against a data root: its environment, and the call (in this process: transform/dbt_invoke.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from transform.dbt_invoke import NodeProgress, invoke_dbt
from transform.state import DBT_PROJECT_DIR
from warehouse.lake import builder_lock, ensure_extensions, lake_target, s3_settings
from warehouse.paths import BenchPaths


class DbtError(RuntimeError):
    pass


def dbt_env(
    paths: BenchPaths,
    warehouse_db: Path | None = None,
    dbt_vars: dict[str, Any] | None = None,
) -> dict[str, str]:
    env = dict(os.environ)
    # dbt's file log defaults to debug level, about a tenth of every call's CPU; info keeps each
    # node's result and every warning. A user's own DBT_LOG_LEVEL_FILE still wins.
    env.setdefault("DBT_LOG_LEVEL_FILE", "info")
    env.update(
        # Relative to the data root, where dbt runs: the connection settings (and with them
        # the saved parse, transform/dbt_parse_cache.py) are then the same for every root.
        BENCH_DUCKDB_PATH=_within_home(paths, warehouse_db or paths.warehouse_db),
        DBT_TARGET_PATH=str((paths.dbt_dir / "target").resolve()),
        DBT_LOG_PATH=str((paths.dbt_dir / "logs").resolve()),
        DBT_PROFILES_DIR=str(DBT_PROJECT_DIR),
        # DuckDB spills here past its memory limit (profiles.yml), beside the warehouse.
        BENCH_DBT_TEMP_DIR=_within_home(paths, paths.dbt_dir / "duckdb_tmp"),
        BENCH_DBT_MODULE_PATH=str(DBT_PROJECT_DIR / "python"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        DBT_USE_COLORS="false",  # errors are re-printed by bench; escape codes would garble them
        # The scoring vars in effect, read by the scoring_var macro (macros/scoring_vars.sql):
        # through the environment, not --vars, so a changed value keeps dbt's partial parse.
        BENCH_SCORING_VARS=json.dumps(dbt_vars or {}, sort_keys=True),
    )
    lake = lake_target(env)
    if lake is not None:  # profiles.yml's `lake` target attaches it (warehouse/lake.py)
        ensure_extensions()
        s3 = s3_settings(env)
        env.update(
            # DBT_ENV_SECRET_*: dbt keeps these out of its logs (a catalog URL may hold a
            # password; the S3 key is one)
            DBT_ENV_SECRET_LAKE_CATALOG=lake.catalog,
            BENCH_LAKE_DATA_PATH=lake.data_path,
            BENCH_LAKE_METADATA_SCHEMA=lake.metadata_schema,
            BENCH_S3_REGION=s3["s3_region"],
            BENCH_S3_ENDPOINT=s3["s3_endpoint"],
            BENCH_S3_USE_SSL=s3["s3_use_ssl"],
            BENCH_S3_URL_STYLE=s3["s3_url_style"],
            DBT_ENV_SECRET_S3_KEY_ID=s3["s3_access_key_id"],
            DBT_ENV_SECRET_S3_SECRET=s3["s3_secret_access_key"],
            DBT_ENV_SECRET_S3_SESSION_TOKEN=s3["s3_session_token"],
        )
    return env


def _within_home(paths: BenchPaths, path: Path) -> str:
    home = paths.home.resolve()
    path = path.resolve()
    return str(path.relative_to(home)) if path.is_relative_to(home) else str(path)


def run_dbt(
    paths: BenchPaths,
    command: list[str],
    *,
    dbt_vars: dict[str, Any] | None = None,
    warehouse_db: Path | None = None,
    quiet: bool = True,
    on_progress: NodeProgress | None = None,
) -> str:
    """One dbt command against a data root's warehouse. Returns dbt's messages: with `quiet`,
    only its warnings and errors (what `dbt --quiet` prints), else every line; raises DbtError
    with them when the command fails."""
    args = [*command, "--project-dir", str(DBT_PROJECT_DIR)]
    if dbt_vars and _runs_unit_tests(command):
        # A unit test states the vars its rule needs (`overrides: vars`), and those win over
        # --vars but not over the environment the scoring_var macro reads first.
        args += ["--vars", json.dumps(dbt_vars, sort_keys=True)]
        dbt_vars = None
    env = dbt_env(paths, warehouse_db, dbt_vars)
    lake = lake_target(env)
    if lake is None:
        result = invoke_dbt(args, env, paths.home, on_progress=on_progress)
    else:  # one builder at a time on a lake, which several machines share (warehouse/lake.py)
        with builder_lock(lake):
            result = invoke_dbt(
                [*args, "--target", "lake"], env, paths.home, on_progress=on_progress
            )
    if not result.success:
        raise DbtError(f"dbt {' '.join(command)} failed:\n{result.problems_or_tail()}")
    return "\n".join(result.problems) if quiet else result.output


def _runs_unit_tests(command: list[str]) -> bool:
    excluded = "unit_test" in command and "--exclude-resource-type" in command
    return command[:1] in (["build"], ["test"]) and not excluded
