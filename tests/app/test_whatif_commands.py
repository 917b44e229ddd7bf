"""What-if safety (issue #27, item 4): a what-if panel never prints a `bench rescore` command the
CLI refuses, the command it prints reproduces the panel's numbers, and the DRACO panel never
prints `--reset` (which discards every other custom var) for its one var."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import duckdb
import pytest
from app_harness import APP_SCRIPT, TIMEOUT_S, ServeSnapshot, open_page
from fixture_draco_snapshot import DracoSnapshot, draco_snapshot, install
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from bench.cli import app as bench_app
from bench.rescore import extraction_weight_names, parse_weights

pytestmark = pytest.mark.slow  # real dbt builds per session

# Slider settings, name -> value (others 0): sums of 1, of 1.10, of 0.95 and all zero.
GRID = [
    {"completeness": 0.4, "success": 0.3, "f1": 0.2, "latency": 0.05, "throughput": 0.05},
    {"completeness": 0.5, "success": 0.3, "f1": 0.2, "latency": 0.05, "throughput": 0.05},
    {"completeness": 0.15, "shingle_f1": 0.85},
    {"shingle_precision": 0.35, "shingle_recall": 0.35, "latency": 0.3},
    {"completeness": 0.6, "success": 0.35},
    {"f1": 1.0},
    {},
]


def cli_accepts(command: str, home: Path) -> None:
    """The real CLI, in-process, on a home with no events (it validates and saves)."""
    args = shlex.split(command)
    assert args[:2] == ["bench", "rescore"], command
    result = CliRunner().invoke(bench_app, [*args[1:], "--home", str(home)])
    assert result.exit_code == 0, (command, result.output)


def composites_from_the_marts(db: Path, run_ids: list[str], weights: dict[str, float]) -> dict:
    """Σ weight × component, NULL as 0, written plainly in SQL over the snapshot's columns."""
    components = {  # weight -> extraction_leaderboard column (the dbt macro's map)
        "success": "useful_success_rate",
        "f1": "token_f1",
        "latency": "latency_score",
        "throughput": "throughput_score",
    }
    terms = " + ".join(
        f"{float(w)!r} * coalesce({components.get(name, name)}, 0)" for name, w in weights.items()
    )
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            f"select run_id, system, {terms or '0'} from marts.extraction_leaderboard "
            f"where run_id in (select unnest(?))",
            [run_ids],
        ).fetchall()
    return {(run, system): value for run, system, value in rows}


@pytest.mark.parametrize("setting", GRID, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_extraction_panel_prints_only_commands_the_cli_accepts_and_they_reproduce_it(
    serve_snapshot: ServeSnapshot, tmp_path: Path, setting: dict[str, float]
) -> None:
    at = open_page("leaderboard")
    sliders = [s for s in at.slider if s.key.startswith("whatif_")]
    assert {s.key.removeprefix("whatif_") for s in sliders} == set(extraction_weight_names())
    for slider in sliders:
        slider.set_value(setting.get(slider.key.removeprefix("whatif_"), 0.0))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    commands = [c.value for c in at.code if c.value.startswith("bench rescore")]
    panel = next(d.value for d in at.dataframe if "What-if rank" in d.value.columns)
    spec = ",".join(f"{k}={v}" for k, v in setting.items())
    if abs(sum(setting.values()) - 1) > 1e-9:  # the CLI refuses: the panel says why, no command
        with pytest.raises(ValueError) as refusal:
            parse_weights(spec)
        assert commands == []
        warnings = " ".join(w.value for w in at.warning)
        assert str(refusal.value).split(" (")[0].replace("--", "") in warnings.replace("\\", "")
        return
    (command,) = commands
    cli_accepts(command, tmp_path / "fresh-home")
    weights = parse_weights(shlex.split(command)[-1])
    assert weights == {n: setting.get(n, 0.0) for n in extraction_weight_names()}
    expected = composites_from_the_marts(
        serve_snapshot.serve_db, sorted(set(panel["Run"])), weights
    )
    keys = zip(panel["Run"], panel["System"], strict=True)
    shown = dict(zip(keys, panel["What-if composite"], strict=True))
    assert shown == pytest.approx(expected, abs=1e-12)


# --- DRACO: the penalty floor ------------------------------------------------------------------


@pytest.fixture(scope="session")
def draco_source(tmp_path_factory: pytest.TempPathFactory) -> DracoSnapshot:
    return draco_snapshot(tmp_path_factory)


def open_draco_leaderboard(run_id: str) -> AppTest:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=TIMEOUT_S).run()
    at.switch_page("app_pages/draco_leaderboard.py")
    at.query_params.update({"run": run_id})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def draco_panel_commands(bench_home: Path, source: DracoSnapshot, floor: int | None) -> list:
    install(source, bench_home)
    at = open_draco_leaderboard(source.run_id)
    for toggle in at.toggle:
        if toggle.key.startswith("draco_floor_on_"):
            toggle.set_value(floor is not None)
    at.run()  # the slider is enabled once the switch is on
    if floor is not None:
        for slider in at.slider:
            if slider.key.startswith("draco_floor_"):
                slider.set_value(floor)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return [c.value for c in at.code if c.value.startswith("bench rescore")]


def test_draco_floor_off_never_prints_reset_and_on_prints_a_floor_the_cli_accepts(
    bench_home: Path, draco_source: DracoSnapshot, tmp_path: Path
) -> None:
    # the fixture publishes no floor: switch off = the published scores, no command at all
    assert draco_panel_commands(bench_home, draco_source, None) == []
    on = draco_panel_commands(bench_home, draco_source, -7)
    assert on and set(on) == {"bench rescore --draco-penalty-floor -7"}
    cli_accepts(on[0], tmp_path / "fresh-home")


def test_draco_floor_off_against_a_floored_snapshot_resets_only_that_var(
    bench_home: Path, draco_source: DracoSnapshot, tmp_path: Path
) -> None:
    install(draco_source, bench_home)
    with duckdb.connect(str(bench_home / "serve.duckdb")) as con:  # as if rescored with -50
        con.execute("update marts.draco_leaderboard set penalty_floor = -50")
    at = open_draco_leaderboard(draco_source.run_id)
    commands = [c.value for c in at.code if c.value.startswith("bench rescore")]
    assert commands and set(commands) == {"bench rescore --reset-var draco_penalty_floor"}
    assert not any("--reset " in c or c.endswith("--reset") for c in commands)
    # on a home with other custom vars, the command keeps them and drops only the floor
    home = tmp_path / "custom-home"
    runner = CliRunner()
    weights = "completeness=0.5,success=0.5"
    for args in (["--weights", weights], ["--draco-penalty-floor", "-50"]):
        assert runner.invoke(bench_app, ["rescore", *args, "--home", str(home)]).exit_code == 0
    cli_accepts(commands[0], home)

    saved = json.loads((home / "scoring.json").read_text())
    assert "draco_penalty_floor" not in saved
    assert saved["extraction_weights"] == parse_weights(weights)
