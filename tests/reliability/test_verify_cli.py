"""`bench verify` end to end: the head it prints, --since after a rewrite, --accept, status."""

from __future__ import annotations

from pathlib import Path

from tests.bench_cli import BenchResult, run_bench
from tests.reliability.test_run_lock import item_event
from tests.reliability.test_tamper import full_rehash
from warehouse.log import EventLog


def bench(home: Path, *args: str) -> BenchResult:
    return run_bench(home, *args, check=False)


def test_verify_since_accept_and_status(tmp_path):
    home = tmp_path / "home"
    log = EventLog(home / "log")
    for run in ("run-a", "run-b"):
        with log.writer() as writer:
            writer.append([item_event(i, run) for i in range(3)])
    first = bench(home, "verify")
    assert first.returncode == 0, first.stderr
    head = first.stdout.split("log head ", 1)[1].split()[0]
    assert head == str(log.head())

    full_rehash(log)  # a careful forger: new content hashes, chain and seal
    since = bench(home, "verify", "--since", head)
    assert since.returncode == 1 and "does not extend head" in since.stderr
    default = bench(home, "verify")  # against the head the first verify recorded
    assert default.returncode == 1 and "does not extend head" in default.stderr
    assert "FAILED" in bench(home, "status").stdout

    accepted = bench(home, "verify", "--accept", "re-hash done by the test, reviewed")
    assert accepted.returncode == 0, accepted.stderr
    assert "acceptance recorded" in accepted.stdout
    assert bench(home, "verify").returncode == 0
    assert "ok at" in bench(home, "status").stdout
    assert bench(home, "verify", "--accept", "nothing to accept").returncode == 2
