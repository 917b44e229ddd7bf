"""+1,000 events on a big data root, the code of this checkout beside an older one, in one run.

    python benchmarks/scale.py --verdicts 1000000 --keep /tmp/s1m      # once: a 1M data root
    git worktree add /tmp/ref-tree <older commit>
    python benchmarks/refresh_ab.py --home /tmp/s1m/scale-1000000 --reference-tree /tmp/ref-tree

The data root is copied twice (one copy per tree; the original is not changed) and each copy
gets a build (nothing new: it fills the tree's saved parse of the dbt project) and its first
publish from its own tree (a new tree may lay the snapshot out differently).
Then, `--rounds` times: the same 1,000 new verdicts (benchmarks/scale.py's rejudge) are
appended to both copies, and `bench ingest`, `bench build` and `bench publish` run in each, one
tree after the other, each command in its own process under /usr/bin/time. The reference tree
runs with the same virtualenv, its own packages first on PYTHONPATH (its dbt project too: the
project is found beside the package). Printed: wall (CPU) and peak RSS per step and tree, and
the snapshot's bytes after the last round.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from scale import APPENDED, append_rejudge, timed  # noqa: E402

BENCH = str(Path(sys.executable).with_name("bench"))
STEPS = ("ingest", "build", "publish")


def copy_root(source: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, symlinks=True)


def run(home: Path, tree: Path | None, *args: str) -> tuple[float, float, float]:
    """One `bench` command in `home`, with `tree`'s packages first when given."""
    saved = os.environ.get("PYTHONPATH")
    if tree is not None:
        os.environ["PYTHONPATH"] = str(tree)
    try:
        return timed(home, BENCH, *args)
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def raw_events(home: Path) -> int:
    import duckdb

    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        return con.execute("select count(*) from raw.events").fetchone()[0]


def snapshot_mb(home: Path) -> float:
    files = [home / "serve.duckdb", *(home / "serve.parts").glob("*")]
    return sum(f.stat().st_size for f in files if f.is_file()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="a built data root (kept)")
    parser.add_argument("--reference-tree", type=Path, required=True, help="older checkout")
    parser.add_argument("--work", type=Path, default=Path("/tmp/refresh-ab"))
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    trees = {"reference": args.reference_tree.resolve(), "this checkout": None}
    homes = {name: args.work / name.replace(" ", "-") for name in trees}
    for name, home in homes.items():
        copy_root(args.home, home)
        run(home, trees[name], "build")  # nothing new: fills the tree's saved parse of dbt
        wall, rss, cpu = run(home, trees[name], "publish")
        print(f"{name}: first publish {wall:.1f} s ({cpu:.0f} s CPU), {rss:,.0f} MB", flush=True)

    figures: dict[tuple[int, str, str], tuple[float, float, float]] = {}
    for round_ in range(1, args.rounds + 1):
        for name, home in homes.items():
            # the writer skips duplicates: round k's call adds its own 1,000 verdicts (the first
            # 1,000 are scale.py's own +1,000, already in a root it kept)
            before = raw_events(home)
            append_rejudge(home, APPENDED * (round_ + 1))
            for step in STEPS:
                figures[(round_, name, step)] = run(home, trees[name], step)
            total = sum(figures[(round_, name, s)][0] for s in STEPS)
            added = raw_events(home) - before
            print(f"round {round_}, {name}: +{added:,} events, refresh {total:.1f} s", flush=True)
            if added != APPENDED:
                raise SystemExit(f"expected {APPENDED:,} new events, loaded {added:,}")

    load = os.getloadavg()[0]
    print(f"\n+{APPENDED:,} events: wall (CPU), peak RSS; load average {load:.2f} at the end")
    print(f"{'round / step':<18} | {'reference':>28} | {'this checkout':>28}")
    for round_ in range(1, args.rounds + 1):
        for step in (*STEPS, "together"):
            cells = []
            for name in trees:
                if step == "together":
                    wall = sum(figures[(round_, name, s)][0] for s in STEPS)
                    cells.append(f"{wall:.1f} s")
                else:
                    wall, rss, cpu = figures[(round_, name, step)]
                    cells.append(f"{wall:.1f} s ({cpu:.0f} s CPU), {rss:,.0f} MB")
            print(f"{round_} {step:<16} | {cells[0]:>28} | {cells[1]:>28}")
    sizes = [f"{snapshot_mb(home):,.0f} MB" for home in homes.values()]
    print(f"{'snapshot bytes':<18} | {sizes[0]:>28} | {sizes[1]:>28}")


if __name__ == "__main__":
    main()
