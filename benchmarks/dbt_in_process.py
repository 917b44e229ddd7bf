"""dbt in bench's own process against dbt as a subprocess, on the dbt half of a rescore.

    python benchmarks/dbt_in_process.py --home DATA_ROOT [--repeat 3]

DATA_ROOT is a built data root (e.g. after `bench demo --no-serve`, or a `benchmarks/scale.py`
root). The work timed is what `bench rescore --draco-penalty-floor` hands to dbt: a build of
the models that read the var and everything downstream (transform/dbt_build.py
rescore_selection), with the floor alternating between two values so every call rebuilds.

Three ways, side by side:

* reference (before): `dbt build` as a subprocess, with the environment bench gave it;
* in-process, cold: a new Python process that imports bench and runs the same build through
  transform.dbt_runner (what a one-shot `bench rescore` pays: imports, the saved parse, nodes);
* in-process, warm: the same call again in a process that already ran one (dbt imported, the
  parsed project kept): what a long-lived process pays per rescore.

The warehouse is copied first; DATA_ROOT is left as it was.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from transform import dbt_build, dbt_runner  # noqa: E402
from transform.state import DBT_PROJECT_DIR  # noqa: E402
from warehouse.paths import BenchPaths  # noqa: E402

FLOORS = (-100, -50)
VAR = "draco_penalty_floor"


def _command(paths: BenchPaths) -> list[str]:
    selection = dbt_build.rescore_selection(paths, [VAR])
    if selection is None:
        sys.exit(f"{paths.home}: no dbt manifest yet; build the data root first")
    return ["build", *dbt_build.NO_UNIT_TESTS, "--select", *selection]


def _subprocess(paths: BenchPaths, command: list[str], floor: int) -> float:
    env = dbt_runner.dbt_env(paths, dbt_vars={VAR: floor})
    dbt = Path(sys.executable).with_name("dbt")
    args = [str(dbt), *command, "--project-dir", str(DBT_PROJECT_DIR), "--quiet"]
    start = time.perf_counter()
    subprocess.run(args, env=env, cwd=paths.home, check=True, capture_output=True)
    return time.perf_counter() - start


_COLD = """
import sys; sys.path.insert(0, {repo!r})
from transform import dbt_runner
from warehouse.paths import BenchPaths
dbt_runner.run_dbt(BenchPaths.from_env({home!r}), {command!r}, dbt_vars={{{var!r}: {floor}}})
"""


def _cold(paths: BenchPaths, command: list[str], floor: int) -> float:
    code = _COLD.format(repo=str(REPO), home=str(paths.home), command=command, var=VAR, floor=floor)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - start


def _warm(paths: BenchPaths, command: list[str], floor: int) -> float:
    start = time.perf_counter()
    dbt_runner.run_dbt(paths, command, dbt_vars={VAR: floor})
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="a built data root")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    source = BenchPaths.from_env(args.home)
    with tempfile.TemporaryDirectory() as tmp:
        paths = BenchPaths.from_env(Path(tmp) / "root").ensure()
        shutil.copyfile(source.warehouse_db, paths.warehouse_db)
        shutil.copytree(source.dbt_dir / "target", paths.dbt_dir / "target")
        command = _command(paths)
        figures: dict[str, list[float]] = {"subprocess": [], "cold": [], "warm": []}
        _warm(paths, command, FLOORS[0])  # this process's first call: the warm ones follow it
        for i in range(args.repeat):
            floor = FLOORS[i % 2]
            figures["subprocess"].append(_subprocess(paths, command, floor))
            figures["cold"].append(_cold(paths, command, FLOORS[(i + 1) % 2]))
            figures["warm"].append(_warm(paths, command, floor))
    print(f"dbt half of a rescore (build --select {len(command) - 4} selections), {args.home}")
    print(f"{'':<44}{'median s':>10}   runs")
    labels = {
        "subprocess": "dbt subprocess (reference: before)",
        "cold": "in-process, new process (bench rescore)",
        "warm": "in-process, long-lived process",
    }
    for key, label in labels.items():
        runs = ", ".join(f"{f:.2f}" for f in figures[key])
        print(f"{label:<44}{statistics.median(figures[key]):>10.2f}   {runs}")


if __name__ == "__main__":
    main()
