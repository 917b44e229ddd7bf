"""A big log loaded into a new DuckLake, the code of this checkout beside an older one, in one run.

    python benchmarks/scale.py --verdicts 1000000 --keep /tmp/s1m      # once: a 1M data root
    git worktree add /tmp/ref-tree <older commit>
    python benchmarks/lake_ingest_ab.py --home /tmp/s1m/scale-1000000 --reference-tree /tmp/ref-tree

Each tree gets a copy of the data root's log alone, and a lake of its own with a local catalog
file and a local data folder (BENCH_WAREHOUSE=ducklake:<file>, BENCH_LAKE_DATA=<folder>); then
`bench ingest` runs once per tree, one after the other, each in its own process under
/usr/bin/time, with the default ingest memory limit (BENCH_INGEST_MEMORY_LIMIT unset: 1 GB).
Printed: wall (CPU), peak RSS and the events in `raw.events` per tree, or how the load failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from refresh_ab import run  # noqa: E402
from scale import environment  # noqa: E402


def lake_env(work: Path) -> dict[str, str]:
    return {
        "BENCH_WAREHOUSE": f"ducklake:{work / 'catalog.ducklake'}",
        "BENCH_LAKE_DATA": str(work / "data"),
    }


def events_in(work: Path) -> int:
    """The rows of the lake's raw.events, read by this checkout's code."""
    count = (
        "from pathlib import Path; from warehouse.lake import open_warehouse\n"
        "with open_warehouse(Path('unused'), read_only=True) as con:\n"
        "    print(con.execute('select count(*) from raw.events').fetchone()[0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", count],
        env={**os.environ, **lake_env(work), "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    return int(out.stdout) if out.returncode == 0 else -1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="a data root with a big log")
    parser.add_argument("--reference-tree", type=Path, required=True, help="older checkout")
    parser.add_argument("--work", type=Path, default=Path("/tmp/lake-ingest-ab"))
    args = parser.parse_args()
    os.environ.pop("BENCH_INGEST_MEMORY_LIMIT", None)

    trees = {"reference": args.reference_tree.resolve(), "this checkout": None}
    rows = {}
    for name, tree in trees.items():
        work = args.work / name.replace(" ", "-")
        shutil.rmtree(work, ignore_errors=True)
        (work / "home").mkdir(parents=True)
        shutil.copytree(args.home / "log", work / "home" / "log")
        try:
            with environment(lake_env(work)):
                wall, rss, cpu = run(work / "home", tree, "ingest")
        except SystemExit as exc:  # a load that fails is a figure too (scale.timed exits)
            wall = rss = cpu = float("nan")
            print(f"{name}: ingest failed: {str(exc)[-400:]}", flush=True)
        rows[name] = (wall, rss, cpu, events_in(work))
        print(f"{name}: {wall:.1f} s, {rss:,.0f} MB, {rows[name][3]:,} events", flush=True)

    load = os.getloadavg()[0]
    print(f"\nbench ingest into a new lake (local catalog); load average {load:.2f} at the end")
    print(f"{'':<16} | {'reference':>30} | {'this checkout':>30}")
    cells = [f"{w:.1f} s ({c:.0f} s CPU), {r:,.0f} MB" for w, r, c, _ in rows.values()]
    print(f"{'ingest':<16} | {cells[0]:>30} | {cells[1]:>30}")
    counts = [f"{n:,}" for *_, n in rows.values()]
    print(f"{'raw.events':<16} | {counts[0]:>30} | {counts[1]:>30}")


if __name__ == "__main__":
    main()
