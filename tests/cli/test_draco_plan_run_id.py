"""`bench plan draco` is the plan of the run `bench run draco` makes with the same options: it
prints that run's id (issue #28: the two commands built two plan types, and the plan could not
say which run it was about), and it needs no vendor key."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bench.cli import app as bench_app
from warehouse.log import EventLog

OPTIONS = ["--tasks", "demo", "--limit", "2", "--judge", "offline", "--samples", "1"]


def bench(home: Path, *args: str) -> str:
    result = CliRunner().invoke(bench_app, [*args, "--home", str(home)])
    assert result.exit_code == 0, result.output
    return result.output


def run_ids(home: Path) -> set[str]:
    return {
        event["run_id"]
        for _raw, event in EventLog(home / "log").read()
        if event["event_type"] == "run_started"
    }


def test_the_plan_names_the_run_that_run_draco_then_writes(tmp_path, monkeypatch):
    home = tmp_path / "home"
    systems = ["--systems", "local-rag,closed-book-research"]
    plan = json.loads(bench(home, "plan", "draco", *systems, *OPTIONS, "--json"))
    assert plan["totals"]["tasks"] == 2 and len(plan["systems"]) == 2

    bench(home, "run", "draco", *systems, *OPTIONS, "--no-preflight", "--no-score")
    assert run_ids(home) == {plan["run_id"]}

    # another selection is another run, and its plan says so
    other = json.loads(bench(home, "plan", "draco", "--systems", "local-rag", *OPTIONS, "--json"))
    assert other["run_id"] != plan["run_id"]


def test_a_vendor_system_is_planned_without_its_key(tmp_path, monkeypatch):
    monkeypatch.delenv("EXA_API_KEY", raising=False)
    home = tmp_path / "home"
    plan = json.loads(
        bench(home, "plan", "draco", "--systems", "exa_agent_high", *OPTIONS, "--json")
    )
    assert plan["run_id"] and plan["systems"][0]["lane"] == "exa_agent_high"
