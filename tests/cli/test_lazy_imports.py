"""`bench --version` and every `bench … -h` start without the heavy half of the stack.

Nothing here is timed (a shared machine makes timings flaky); what makes startup slow is which
modules get imported, and that is exact: dlt, duckdb, dbt, the ingest pipeline, the event models
(pydantic) and the HTTP clients are for commands that do work, imported in their bodies.
pydantic itself is the one exception below a subcommand: typer 0.29 imports it to coerce the root
group's unset options (`help`, `--install-completion`) before any subcommand runs, `-h` included.
Measured figures: docs/benchmarks.md ("CLI startup").
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# Top-level packages (and our own modules) that only a working command may import.
HEAVY = (
    "dlt",
    "duckdb",
    "dbt",
    "pandas",
    "pyarrow",
    "pydantic",
    "httpx",
    "ingest",
    "ingest.pipeline",
    "transform.pipeline",
    "bench.run_report",
    "transform.dbt_runner",
    "warehouse.events",
    "warehouse.log",
    "collectors.draco.judge",
)

_PROBE = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from bench.cli import main

    loaded = {}
    for argv in ARGVS:
        sys.argv = ["bench", *argv]
        code = 0
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                main()
            except SystemExit as exc:
                code = exc.code or 0
        loaded[" ".join(argv)] = [code, sorted(m for m in HEAVY if m in sys.modules)]
    print(json.dumps(loaded))
    """
)


def _heavy_modules_after(argvs: list[list[str]]) -> dict[str, list]:
    """Run `bench ARGV` for each ARGV in one fresh interpreter, through the console script's
    own `main`; after each, [exit code, the heavy modules imported so far]."""
    code = f"ARGVS = {argvs!r}\nHEAVY = {HEAVY!r}\n{_PROBE}"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _command_paths() -> list[list[str]]:
    code = (
        "from bench.cli import cli_command\nfrom bench.help import walk\n"
        "print('\\n'.join(path for path, _ in walk(cli_command())))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def test_version_and_root_help_import_nothing_heavy() -> None:
    assert _heavy_modules_after([["--version"], ["-h"]]) == {"--version": [0, []], "-h": [0, []]}


def test_every_help_imports_nothing_heavy() -> None:
    paths = _command_paths()
    assert ["rescore"] in paths and ["run", "draco"] in paths  # the walk found the tree
    # One interpreter for all of them: modules accumulate, so the last entry covers every help.
    loaded = _heavy_modules_after([["-h"], *([*path, "-h"] for path in paths)])
    assert len(loaded) == len(paths) + 1
    assert all(code == 0 for code, _ in loaded.values()), loaded
    offenders = {argv: [m for m in mods if m != "pydantic"] for argv, (_, mods) in loaded.items()}
    offenders = {argv: mods for argv, mods in offenders.items() if mods}
    assert not offenders, f"`bench … -h` imported heavy modules: {offenders}"


def test_the_probe_sees_a_working_commands_imports(tmp_path) -> None:
    """A control: a command that does work (here a refused `bench rescore` that first checks
    the warehouse for events) does import the heavy modules, so an empty list above means
    something."""
    argv = ["rescore", "--threshold", "0.5", "--home", str(tmp_path)]
    code, mods = _heavy_modules_after([argv])[" ".join(argv)]
    assert code == 0
    assert "transform.pipeline" in mods and "ingest.pipeline" in mods
