"""`bench` as the tests run it: in the test's own process, or as a process of its own.

In the test's process (the default) a command costs what it does: a subprocess first spends
~4 s of CPU importing dbt, dlt and duckdb and loading dbt's saved parse, and the suite starts
a few hundred of them. In-process, a pytest worker pays the imports once and keeps dbt's
parsed project between builds (transform/dbt_invoke.py), as a long-lived `bench` would.

What a process of its own gives a command is given here for the call and restored after it:
the environment (the test's, plus `BENCH_HOME`), the working directory, `sys.argv`, stdout and
stderr (captured; `bench` wraps them in its secret scrubber), its consoles' colour and width
(as a new process's on a pipe), and the exit code (`SystemExit`, or 1 with the traceback on
stderr for an exception `bench` let through, as Python's own exit would be). There is no
timeout in-process: pytest's own run bounds it.

`subprocess=True` runs the installed `bench` entry point instead. Use it where the test is
about the process: a kill, a lock held by another process, a crash, the entry point itself,
or anything printed before `bench.cli.main` runs.
"""

from __future__ import annotations

import io
import os
import subprocess as _subprocess
import sys
import threading
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

BENCH = str(Path(sys.executable).with_name("bench"))
TIMEOUT_S = 600
_ONE_COMMAND_AT_A_TIME = threading.Lock()


@dataclass
class BenchResult:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def __str__(self) -> str:
        return (
            f"bench {' '.join(self.args)} exited {self.returncode}:\n{self.stdout}\n{self.stderr}"
        )


def bench_env(home: Path | None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test's environment, `env` over it, and `BENCH_HOME` when a home is given."""
    merged = {
        **os.environ,
        "RUNTIME__DLTHUB_TELEMETRY": "false",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        **(env or {}),
    }
    if home is not None:
        merged["BENCH_HOME"] = str(home)
    merged.pop("PYTEST_CURRENT_TEST", None)
    return merged


def run_bench(
    home: Path | None,
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    check: bool = True,
    subprocess: bool = False,
    stdin: str | None = None,
) -> BenchResult:
    """`bench <args>` against the data root `home`, reading `stdin` when given (as a pipe);
    `check` raises when it exits non-zero."""
    full_env = bench_env(home, env)
    run = _as_subprocess if subprocess else _in_process
    result = run(list(args), full_env, cwd or Path.cwd(), stdin)
    if check and result.returncode != 0:
        raise AssertionError(str(result))
    return result


def _as_subprocess(
    args: list[str], env: dict[str, str], cwd: Path, stdin: str | None
) -> BenchResult:
    proc = _subprocess.run(
        [BENCH, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=TIMEOUT_S,
        input=stdin,
    )
    return BenchResult(args, proc.returncode, proc.stdout, proc.stderr)


def _in_process(args: list[str], env: dict[str, str], cwd: Path, stdin: str | None) -> BenchResult:
    from bench.cli import main

    stdout, stderr = _captured(), _captured()
    piped = None if stdin is None else io.TextIOWrapper(io.BytesIO(stdin.encode()), "utf-8")
    # rich wraps at the width it finds: 80 for a pipe, as a subprocess's would be
    env = {"COLUMNS": "80", **env}
    with (
        _ONE_COMMAND_AT_A_TIME,
        _process_state(args, env, cwd, stdout, stderr, piped),
        _consoles_as_in_a_new_process(),
    ):
        try:
            main()
            code = 0
        except SystemExit as exit_:
            code = _exit_code(exit_.code)
        except BaseException:  # what Python prints and exits 1 with, in a process of its own
            traceback.print_exc(file=stderr)
            code = 1
    return BenchResult(args, code, _text(stdout), _text(stderr))


def _captured() -> io.TextIOWrapper:
    """A stream like a process's own: text, with the bytes under it (`.buffer`) for output
    such as `bench export`'s Parquet; written through, so both land in order."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8", errors="replace")


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")  # sys.exit("message") prints the message and exits 1
    return 1


@contextmanager
def _consoles_as_in_a_new_process() -> Iterator[None]:
    """bench's rich consoles are made when their module is first imported, and keep two things
    from that moment: the colours of a terminal (`pytest -s` run by hand: colour codes in the
    captured text) and a width from `COLUMNS` (a later call's width ignored). For the call they
    get what a new process's would: no colour on a pipe, the width of the call's environment."""
    from rich.console import Console

    consoles = {
        id(value): value
        for name, module in list(sys.modules.items())
        if name.split(".")[0] == "bench" and module is not None
        for value in vars(module).values()
        if isinstance(value, Console)
    }.values()
    saved = [(console, console._color_system, console._width) for console in consoles]
    for console in consoles:
        console._color_system = None
        console._width = None
    try:
        yield
    finally:
        for console, color_system, width in saved:
            console._color_system, console._width = color_system, width


@contextmanager
def _process_state(
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    stdout: io.TextIOWrapper,
    stderr: io.TextIOWrapper,
    stdin: io.TextIOWrapper | None,
) -> Iterator[None]:
    saved = dict(os.environ), os.getcwd(), sys.argv, sys.stdout, sys.stderr, sys.stdin
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = ["bench", *args]
    sys.stdout, sys.stderr = stdout, stderr
    sys.stdin = stdin or sys.stdin
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        environ, cwd_before, sys.argv, sys.stdout, sys.stderr, sys.stdin = saved
        os.chdir(cwd_before)
        os.environ.clear()
        os.environ.update(environ)
