"""Run a step's `bench` command against the sequence's data root, or kill -9 it.

A step runs in this process (tests/bench_cli.py; its fidelity to the installed command is
tests/cli/test_bench_in_process.py), as does every check between steps: the process pays dbt's
import and parse once, not once per command (~5 s a step). A step that is killed runs as its own
process, since a kill is of a process; the same command again then runs here.

A kill sends SIGKILL to the command's whole process group (bench and the dbt it starts), as
a crash, the OOM killer or a closed session does: killing bench alone would leave its dbt
child running, holding the DuckDB file, which is a different scenario.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BENCH = str(Path(sys.executable).with_name("bench"))


@dataclass
class Outcome:
    argv: list[str]
    returncode: int | None  # None: killed
    output: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def tail(self, lines: int = 12) -> str:
        return "\n".join(self.output.strip().splitlines()[-lines:])


def bench_env(home: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "BENCH_HOME": str(home),
        "COLUMNS": "200",  # rich tables not wrapped: messages stay one line
        # every mart of 300 rows or more is published as Parquet parts, and dim_events by
        # increments (warehouse/publish.py): the invariants then hold the parts to the build
        "BENCH_PUBLISH_PART_MIN_ROWS": "300",
        "RUNTIME__DLTHUB_TELEMETRY": "false",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


def run_bench(
    home: Path, argv: list[str], cwd: Path, *, env: dict[str, str] | None = None
) -> Outcome:
    """A step's command, or a check's between steps (the fresh-rebuild oracle, `verify`,
    `plan`), in this process; `env` over the usual environment."""
    from tests.bench_cli import run_bench as run_in_process

    started = time.monotonic()
    env = {k: v for k, v in {**bench_env(home), **(env or {})}.items() if k != "BENCH_HOME"}
    result = run_in_process(home, *argv, env=env, cwd=cwd, check=False)
    return Outcome(argv, result.returncode, result.output, time.monotonic() - started)


def kill_bench(
    home: Path, argv: list[str], cwd: Path, after_s: float, *, env: dict[str, str] | None = None
) -> Outcome:
    """Start the command, SIGKILL its process group after `after_s`; the outcome's returncode
    is None when the kill landed, the command's own code when it had already ended. `env`
    over the usual environment."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as output:  # a file, not a pipe: a full pipe would stall it
        proc = subprocess.Popen(
            [BENCH, *argv],
            env={**bench_env(home), **(env or {})},
            cwd=cwd,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            returncode: int | None = proc.wait(timeout=after_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            returncode = None
        output.seek(0)
        text = output.read().decode("utf-8", "replace")
    return Outcome(argv, returncode, text, time.monotonic() - started)
