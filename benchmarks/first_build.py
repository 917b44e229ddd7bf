"""A new data root's first dbt call: the full parse it used to pay, beside the saved parse it
now starts from (transform/dbt_parse_cache.py).

    python benchmarks/first_build.py [--repeat 3]

Each repeat makes two empty data roots and an empty parse cache, then runs `dbt parse` through
bench's own runner (the environment and working directory `bench build` uses) in the first
root, which parses the project in full and fills the cache, and in the second, which starts
from the cache. Reference: the first root's figure (what every new root paid before). The
saving is the same on a `bench build` or `bench demo`, whose first dbt call parses first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from transform import dbt_parse_cache, dbt_runner  # noqa: E402
from warehouse.paths import BenchPaths  # noqa: E402


def timed_parse(home: Path) -> float:
    paths = BenchPaths.from_env(home).ensure()
    start = time.perf_counter()
    dbt_runner.run_dbt(paths, ["parse"])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    full, reused = [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            dbt_parse_cache.CACHE_DIR = Path(tmp) / "parse-cache"
            full.append(timed_parse(Path(tmp) / "first-root"))
            reused.append(timed_parse(Path(tmp) / "second-root"))
    print(f"{'first dbt call of a new data root':<42}{'median s':>10}{'runs':>22}")
    for label, figures in (("full parse (reference: before)", full), ("saved parse", reused)):
        runs = ", ".join(f"{f:.1f}" for f in figures)
        print(f"{label:<42}{statistics.median(figures):>10.1f}{runs:>22}")
    print(f"saved per new data root: {statistics.median(full) - statistics.median(reused):.1f} s")


if __name__ == "__main__":
    main()
