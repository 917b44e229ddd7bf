"""One word for a system under test on every command (--systems); the old flags still work."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bench.cli import app

runner = CliRunner()


def plan_json(home: Path, flag: str) -> dict:
    result = runner.invoke(
        app,
        [
            "plan",
            "qa",
            "--questions",
            "demo",
            flag,
            "local-bm25,closed-book",
            "--json",
            "--home",
            str(home),
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_qa_plan_is_the_same_with_systems_or_the_old_lanes_flag(tmp_path: Path):
    with_systems = plan_json(tmp_path, "--systems")
    with_lanes = plan_json(tmp_path, "--lanes")
    assert with_systems == with_lanes
    assert with_systems["run_id"]


def test_extraction_run_takes_systems_and_the_old_engines_flag(tmp_path: Path):
    for flag in ("--systems", "--engines"):
        result = runner.invoke(
            app,
            [
                "run",
                "extraction",
                "--corpus",
                "demo",
                flag,
                "no-such-engine",
                "--home",
                str(tmp_path),
            ],
        )
        # `bench` turns the UserError into one line and exit 2 (bench.cli.main); here it surfaces
        assert result.exit_code != 0
        assert "--systems: unknown no-such-engine" in str(result.exception)
