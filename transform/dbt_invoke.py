"""dbt in this process, its parsed project kept between calls.

A dbt subprocess spends ~3 s before its first node (the interpreter, dbt's imports, loading the
saved parse) and more winding down, while a rescore or a +N build is often less work than that.
Here dbt is imported once per process and the parsed project (dbt's Manifest) is kept, keyed
by what decides it (the project's files and `--vars`); every later call hands it to dbtRunner
(`manifest=`) and goes straight to the nodes. A process that lives on (the test workers, a
`bench` that runs ingest, build and publish) pays the parse once.

dbt assumes a process of its own in four ways, each undone after every call:

* its settings come from the environment and relative paths from the working directory: both
  are set for the call and restored after, one call at a time (a lock);
* it records `sys.argv` as the invocation (run_results.json `invocation_command`): bench's own
  argv may carry a credential (a gateway URL), so dbt sees `dbt <its args>` instead;
* dbt-duckdb keeps the DuckDB database open in a class attribute after `invoke` returns, which
  locks the file against publish, the app or any other process: it is closed after every call;
* it prints to stdout: its console log is off (`--log-level none`), its messages reach us by
  callback, the file log under `DBT_LOG_PATH` is kept.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transform import dbt_parse_cache
from transform.state import DBT_PROJECT_DIR, project_fingerprint

NodeProgress = Callable[[int, int, str], None]  # (nodes started, total, node name)

_ONE_CALL_AT_A_TIME = threading.Lock()
# The parsed project depends on what dbt checks before reusing a saved parse (the connection
# settings: a node's database is the DuckDB file's name) and on the project's files.
_kept_manifests: dict[
    tuple[str, str], Any
] = {}  # (saved-parse key, project fingerprint) -> Manifest


@dataclass
class DbtResult:
    success: bool
    messages: list[str] = field(default_factory=list)  # dbt's info, warn and error lines
    problems: list[str] = field(default_factory=list)  # the warn and error lines alone

    @property
    def output(self) -> str:
        return "\n".join(self.messages)

    def problems_or_tail(self) -> str:
        """What `dbt --quiet` would have printed; the last lines when nothing warned."""
        return "\n".join(self.problems or self.messages[-40:]).strip()


class _Listener:
    """dbt's events, as the lines its console would show, plus node-start progress."""

    def __init__(self, result: DbtResult, on_progress: NodeProgress | None) -> None:
        self.result, self.on_progress, self.started = result, on_progress, 0

    def __call__(self, event: Any) -> None:
        info = event.info
        if info.level in ("warn", "error"):
            self.result.problems.append(info.msg)
        if info.level != "debug":
            self.result.messages.append(info.msg)
        if self.on_progress is not None and info.name == "LogStartLine":
            # threads start nodes out of order: report how many have started, not dbt's index
            self.started += 1
            node = event.data.node_info.node_name or event.data.description
            self.on_progress(self.started, int(event.data.total), str(node))


def invoke_dbt(
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    *,
    on_progress: NodeProgress | None = None,
) -> DbtResult:
    """`dbt <args>` with `env` as the environment and `cwd` as the working directory."""
    result = DbtResult(success=False)
    listener = _Listener(result, on_progress)
    with _ONE_CALL_AT_A_TIME, _process_state(env, cwd, args):
        try:
            if args[0] == "parse":  # asked for a parse: parse (from the saved one when it fits)
                result.success = _parse(args, env, listener) is not None
                return result
            manifest = _manifest(args, env, listener)
            if manifest is None:
                return result
            result.success = _run(args, manifest, listener)
        finally:
            _close_duckdb()
    return result


def _run(args: list[str], manifest: Any, listener: _Listener) -> bool:
    from dbt.cli.main import dbtRunner

    outcome = dbtRunner(manifest=manifest, callbacks=[listener]).invoke(
        [*args, "--log-level", "none"]
    )
    if outcome.exception is not None:
        listener.result.problems.append(str(outcome.exception))
    return outcome.success


def _manifest(args: list[str], env: dict[str, str], listener: _Listener) -> Any | None:
    """The parsed project for these args: kept from an earlier call, else parsed now. None when
    the project does not parse; the listener then holds why."""
    from dbt.parser.manifest import write_manifest

    manifest = _kept_manifests.get(_key(args, env))
    if manifest is None:
        cli_vars = ["--vars", _cli_vars(args)] if _cli_vars(args) else []
        return _parse(["parse", "--project-dir", str(DBT_PROJECT_DIR), *cli_vars], env, listener)
    target = Path(env["DBT_TARGET_PATH"])
    if not (target / "manifest.json").exists():
        # bench reads the manifest beside a root's build (lineage of a rescore, build selection)
        target.mkdir(parents=True, exist_ok=True)
        write_manifest(manifest, str(target))
    return manifest


def _parse(args: list[str], env: dict[str, str], listener: _Listener) -> Any | None:
    """`dbt parse`, from the saved parse when it fits (transform/dbt_parse_cache.py); the
    manifest is kept for the calls that follow."""
    from dbt.cli.main import dbtRunner

    target = Path(env["DBT_TARGET_PATH"])
    cached = dbt_parse_cache.cached_parse(env, args)
    dbt_parse_cache.restore(target, cached)
    outcome = dbtRunner(callbacks=[listener]).invoke([*args, "--log-level", "none"])
    dbt_parse_cache.save(target, cached)
    if not outcome.success:
        if outcome.exception is not None:
            listener.result.problems.append(str(outcome.exception))
        return None
    _kept_manifests[_key(args, env)] = outcome.result
    return outcome.result


def _cli_vars(args: list[str]) -> str:
    return args[args.index("--vars") + 1] if "--vars" in args else ""


def _key(args: list[str], env: dict[str, str]) -> tuple[str, str]:
    saved_parse = dbt_parse_cache.cached_parse(
        env, ["--vars", _cli_vars(args)] if _cli_vars(args) else []
    )
    return (saved_parse.name, project_fingerprint())


def _close_duckdb() -> None:
    """Close the database dbt-duckdb keeps open between its calls (see the module docstring)."""
    try:
        from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    except ImportError:  # dbt never got as far as loading the adapter
        return
    environment = DuckDBConnectionManager._ENV
    if environment is not None:
        environment.close()
    DuckDBConnectionManager.close_all_connections()
    gc.collect()  # cursors in reference cycles would keep the instance, and its file lock, alive


@contextmanager
def _process_state(env: dict[str, str], cwd: Path, args: list[str]) -> Iterator[None]:
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = ["dbt", *args]
    try:
        yield
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
