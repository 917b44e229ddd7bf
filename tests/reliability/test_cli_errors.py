"""Machine errors are one clear line, exit 2: a full disk, a read-only home, a warehouse another
process holds (not dlt's "check your internet connection")."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.errors import explain

BENCH = str(Path(sys.executable).with_name("bench"))


@pytest.mark.parametrize(
    ("code", "expected"),
    [(errno.ENOSPC, "no space left"), (errno.EROFS, "read-only"), (errno.EACCES, "permission")],
)
def test_disk_errors_are_explained(code, expected):
    wrapped = RuntimeError("load failed")
    wrapped.__cause__ = OSError(code, os.strerror(code), "/data/home/log/x.jsonl")
    message = explain(wrapped)
    assert message and expected in message and "/data/home/log/x.jsonl" in message


def test_other_errors_are_left_alone():
    assert explain(KeyError("x")) is None


def test_a_warehouse_held_by_another_process_is_named_with_its_pid(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    db = home / "warehouse.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
            "c.execute('create table t(x int)'); print('ready', flush=True); time.sleep(60)",
            str(db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        (home / "log").mkdir()
        from tests.reliability.test_run_lock import item_event
        from warehouse.log import EventLog

        with EventLog(home / "log").writer() as writer:
            writer.append([item_event(0, "run-lock-conflict")])
        env = {**os.environ, "BENCH_HOME": str(home)}
        started = time.monotonic()
        proc = subprocess.run([BENCH, "ingest"], capture_output=True, text=True, env=env)
    finally:
        holder.kill()
        holder.wait()
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output[-2000:]
    assert "in use by another process" in output and f"PID {holder.pid}" in output
    assert "internet" not in output and "Traceback" not in output
    assert time.monotonic() - started < 120


@pytest.mark.slow
def test_the_readmes_rescore_works_on_a_fresh_home(tmp_path):
    """The README's own `bench rescore --weights ...` line works on a fresh home: the weights
    are validated, saved, and every later build scores with them (no dbt error)."""
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    weights = re.search(r"bench rescore --weights (\S+)", readme).group(1)
    env = {**os.environ, "BENCH_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [BENCH, "rescore", "--weights", weights], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "saved" in proc.stderr and "completeness" in proc.stderr
    saved = json.loads((tmp_path / "home" / "scoring.json").read_text())
    expected = {k: float(v) for k, v in (pair.split("=") for pair in weights.split(","))}
    assert {k: v for k, v in saved["extraction_weights"].items() if v} == expected
