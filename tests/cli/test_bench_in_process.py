"""The tests' in-process `bench` (tests/bench_cli.py) answers as the installed command does, and
leaves the test's process as it found it: what the suite's speed rests on must not change what
the tests see."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.bench_cli import run_bench

CASES = [
    pytest.param(["status"], id="status"),
    pytest.param(["verify"], id="verify-empty-log"),
    pytest.param(["sql", "select 1"], id="sql-without-snapshot"),
    pytest.param(["rescore", "--weights", "speed=1"], id="bad-weights"),
    pytest.param(["export", "nope"], id="unknown-mart"),
]


@pytest.mark.parametrize("args", CASES)
def test_in_process_gives_the_exit_code_and_output_of_the_command(tmp_path: Path, args):
    home = tmp_path / "home"
    wide = {"COLUMNS": "200"}
    expected = run_bench(home, *args, env=wide, check=False, subprocess=True)
    got = run_bench(home, *args, env=wide, check=False)
    assert got.returncode == expected.returncode, (got, expected)
    # the same words (paths and timings aside, the lines are the same lines)
    assert _shape(got.stdout, home) == _shape(expected.stdout, home)
    assert _shape(got.stderr, home) == _shape(expected.stderr, home)


def test_the_process_is_left_as_it_was(tmp_path: Path):
    environ, cwd, argv = dict(os.environ), os.getcwd(), list(sys.argv)
    stdout, stderr = sys.stdout, sys.stderr
    result = run_bench(tmp_path / "home", "status", env={"BENCH_EXTRA": "1"}, cwd=tmp_path)
    assert "bench home" in result.output
    assert dict(os.environ) == environ and os.getcwd() == cwd and sys.argv == argv
    assert sys.stdout is stdout and sys.stderr is stderr


def test_an_exception_bench_lets_through_is_exit_1_with_its_traceback(tmp_path, monkeypatch):
    from bench import status

    def broken(_paths):
        raise RuntimeError("boom")

    monkeypatch.setattr(status, "status_rows", broken)
    result = run_bench(tmp_path / "home", "status", check=False)
    assert result.returncode == 1, result
    assert "Traceback" in result.stderr and "RuntimeError: boom" in result.stderr


def _shape(text: str, home: Path) -> list[str]:
    lines = text.replace(str(home), "<home>").splitlines()
    return [
        " ".join("<n>" if any(c.isdigit() for c in word) else word for word in line.split())
        for line in lines
    ]


def test_consoles_made_in_a_terminal_print_as_a_new_process_would(tmp_path, monkeypatch):
    """`pytest -s` by hand: bench.cli's consoles were made with a terminal's colours and a
    COLUMNS of 60; a call still prints no colour codes, at the width its own env gives."""
    from rich.color import ColorSystem

    from bench import cli

    monkeypatch.setattr(cli.console, "_color_system", ColorSystem.TRUECOLOR)
    monkeypatch.setattr(cli.console, "_width", 60)
    result = run_bench(tmp_path / "home", "export", "nope", env={"COLUMNS": "300"}, check=False)
    assert result.returncode == 2
    assert "\x1b[" not in result.stderr
    assert max(len(line) for line in result.stderr.splitlines()) > 60, result.stderr
    assert cli.console._color_system == ColorSystem.TRUECOLOR  # given back after the call
