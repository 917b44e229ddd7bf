"""Run dbt as a subprocess: an in-process dbtRunner keeps the DuckDB file locked afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transform import dbt_parse_cache
from transform.state import DBT_PROJECT_DIR
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
    return env


def _within_home(paths: BenchPaths, path: Path) -> str:
    home = paths.home.resolve()
    path = path.resolve()
    return str(path.relative_to(home)) if path.is_relative_to(home) else str(path)


def dbt_executable() -> str:
    candidate = Path(sys.executable).with_name("dbt")
    return str(candidate) if candidate.exists() else "dbt"


NodeProgress = Callable[[int, int, str], None]  # (nodes started, total, node name)


def run_dbt(
    paths: BenchPaths,
    command: list[str],
    *,
    dbt_vars: dict[str, Any] | None = None,
    warehouse_db: Path | None = None,
    quiet: bool = True,
    on_progress: NodeProgress | None = None,
) -> str:
    args = [dbt_executable(), *command, "--project-dir", str(DBT_PROJECT_DIR)]
    if dbt_vars and _runs_unit_tests(command):
        # A unit test states the vars its rule needs (`overrides: vars`), and those win over
        # --vars but not over the environment the scoring_var macro reads first.
        args += ["--vars", json.dumps(dbt_vars, sort_keys=True)]
        dbt_vars = None
    env = dbt_env(paths, warehouse_db, dbt_vars)
    target, cached = paths.dbt_dir / "target", dbt_parse_cache.cached_parse(env, args)
    dbt_parse_cache.restore(target, cached)
    try:
        return _run(args, env, paths.home, quiet, on_progress, " ".join(command))
    finally:
        dbt_parse_cache.save(target, cached)


def _run(
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    quiet: bool,
    on_progress: NodeProgress | None,
    what: str,
) -> str:
    if on_progress is not None:
        return _run_with_progress(args, env, cwd, on_progress, what)
    if quiet:
        args.append("--quiet")
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise DbtError(f"dbt {what} failed (exit {proc.returncode}):\n{output.strip()}")
    return output


def _runs_unit_tests(command: list[str]) -> bool:
    excluded = "unit_test" in command and "--exclude-resource-type" in command
    return command[:1] in (["build"], ["test"]) and not excluded


def _run_with_progress(
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    on_progress: NodeProgress,
    what: str,
) -> str:
    """dbt with JSON log lines streamed: each node start reports (index, total, name); the error
    text is what `--quiet` would have printed (the warn/error messages), not the JSON."""
    messages: list[str] = []
    problems: list[str] = []
    started = 0
    with subprocess.Popen(
        [*args, "--log-format", "json"],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                record = json.loads(line)
            except ValueError:
                messages.append(line.rstrip())
                continue
            info, data = record.get("info", {}), record.get("data", {})
            message = info.get("msg", "")
            messages.append(message)
            if info.get("level") in ("warn", "error"):
                problems.append(message)
            if info.get("name") == "LogStartLine" and "total" in data:
                # threads start nodes out of order: report how many have started, not dbt's index
                started += 1
                node = (data.get("node_info") or {}).get("node_name") or data.get("description", "")
                on_progress(started, int(data["total"]), str(node))
    output = "\n".join(problems or messages[-40:])
    if proc.returncode != 0:
        raise DbtError(f"dbt {what} failed (exit {proc.returncode}):\n{output.strip()}")
    return output
