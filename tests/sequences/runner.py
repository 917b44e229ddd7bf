"""Run `bench` as a user does: a subprocess against the sequence's data root; or kill -9 it.
The checks between steps run theirs in this process (`check_bench`).

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
COMMAND_TIMEOUT_S = 600


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


def run_bench(home: Path, argv: list[str], cwd: Path) -> Outcome:
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [BENCH, *argv],
            env=bench_env(home),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return Outcome(
            argv, -1, f"{out}\n(timed out after {COMMAND_TIMEOUT_S} s)", COMMAND_TIMEOUT_S
        )
    return Outcome(argv, proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started)


def check_bench(home: Path, argv: list[str], cwd: Path) -> Outcome:
    """A command the checks run between steps (the fresh-rebuild oracle, `verify`, `plan`), not
    a step of the user's: in this process (tests/bench_cli.py), which pays dbt's import and
    parse once instead of once per check."""
    from tests.bench_cli import run_bench as run_in_process

    started = time.monotonic()
    env = {k: v for k, v in bench_env(home).items() if k != "BENCH_HOME"}
    result = run_in_process(home, *argv, env=env, cwd=cwd, check=False)
    return Outcome(argv, result.returncode, result.output, time.monotonic() - started)


def kill_bench(home: Path, argv: list[str], cwd: Path, after_s: float) -> Outcome:
    """Start the command, SIGKILL its process group after `after_s`; the outcome's returncode
    is None when the kill landed, the command's own code when it had already ended."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as output:  # a file, not a pipe: a full pipe would stall it
        proc = subprocess.Popen(
            [BENCH, *argv],
            env=bench_env(home),
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
