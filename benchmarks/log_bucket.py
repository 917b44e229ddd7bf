"""The log in object storage at real size: two collecting machines push, one builder loads both.

    python benchmarks/log_bucket.py --verdicts 1000000 [--work /tmp/log-bucket]

Two data roots (writer-a, writer-b) each get half of the DRACO runs scale.py generates (its own
generator: realistic reports, provider bodies and LLM records), writer-a also the other
families' events. The bucket is a folder (the same code path as S3, warehouse/log_bucket.py,
without a network in the figures). Each command runs in its own process under /usr/bin/time,
with the default ingest memory limit (1 GB). Printed side by side:

- `bench log push` on each writer, as a collector that never loads runs it (its sealed
  segments plain, compressed on the way up), then again (nothing to upload), and the
  bucket's bytes against the logs';
- the reference: each writer loading its own log into its own warehouse (today's default);
- a builder that collected nothing: `bench ingest` from the bucket (both logs, one load), the
  events it holds against the two writers', then `bench verify` (every line of both logs);
- +1,000 events on writer-a: push, then the builder's ingest of just those.
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

from scale import BENCH, GENERATORS, environment, timed  # noqa: E402

SCALE = str(REPO / "benchmarks" / "scale.py")


def generate(homes: list[Path], n_verdicts: int) -> None:
    """scale.py's generator processes, part k of the runs into homes[k], side by side."""
    assert len(homes) == GENERATORS
    subprocess.run([sys.executable, SCALE, "--internal-beside", str(homes[0])], check=True)
    writers = [
        subprocess.Popen(
            [sys.executable, SCALE, "--internal-generate", str(home), str(n_verdicts), str(k)],
            stdout=subprocess.DEVNULL,
        )
        for k, home in enumerate(homes)
    ]
    for writer in writers:
        if writer.wait() != 0:
            raise SystemExit("generating the log failed")


def events_in(home: Path) -> int:
    import duckdb

    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        try:
            return con.execute("select count(distinct event_id) from raw.events").fetchone()[0]
        except duckdb.CatalogException:
            return 0  # nothing loaded: a writer with no run of its own (a small --verdicts)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def row(label: str, figures: tuple[float, float, float], note: str = "") -> None:
    wall, rss, cpu = figures
    print(f"{label:<44} {wall:8.1f} s {cpu:8.1f} s CPU {rss:8.0f} MB   {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verdicts", type=int, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/log-bucket"))
    args = parser.parse_args()
    os.environ.pop("BENCH_INGEST_MEMORY_LIMIT", None)
    shutil.rmtree(args.work, ignore_errors=True)
    homes = [args.work / "writer-a", args.work / "writer-b"]
    builder, bucket = args.work / "builder", args.work / "bucket"
    for home in (*homes, builder):
        home.mkdir(parents=True)
    generate(homes, args.verdicts)

    print(f"{args.verdicts:,} verdicts asked, two writers; each command under /usr/bin/time")
    print(f"{'step':<44} {'wall':>10} {'CPU':>14} {'peak RSS':>11}")
    # a collector that never loads: its sealed segments are plain, compressed on the way up
    for name, home in zip(("a", "b"), homes, strict=True):
        row(
            f"writer-{name}: bench log push",
            timed(home, BENCH, "log", "push", "--bucket", str(bucket)),
        )
    row(
        "writer-a: bench log push again",
        timed(homes[0], BENCH, "log", "push", "--bucket", str(bucket)),
    )
    logs = sum(folder_bytes(home / "log") for home in homes)
    print(f"{'bytes: both logs (plain)':<44} {logs / 2**20:10.1f} MB")
    print(f"{'bytes: the bucket':<44} {folder_bytes(bucket) / 2**20:10.1f} MB")

    local = [timed(home, BENCH, "ingest") for home in homes]
    for name, figures in zip(("a", "b"), local, strict=True):
        row(f"reference: writer-{name} ingests its own log", figures)
    expected = events_in(homes[0]) + events_in(homes[1])  # each run is written by one part

    with environment({"BENCH_LOG_BUCKET": str(bucket)}):
        ingest = timed(builder, BENCH, "ingest")
        loaded = events_in(builder)
        row("builder: bench ingest from the bucket", ingest, f"{loaded:,} events")
        print(f"{'events: writers / builder':<44} {expected:,} / {loaded:,}")
        row("builder: bench verify (every line)", timed(builder, BENCH, "verify"))
        subprocess.run([sys.executable, SCALE, "--internal-append", str(homes[0])], check=True)
        row("+1,000 on writer-a: bench log push", timed(homes[0], BENCH, "log", "push"))
        row(
            "+1,000: builder: bench ingest",
            timed(builder, BENCH, "ingest"),
            f"{events_in(builder) - loaded:,} new events",
        )
    if loaded != expected:
        raise SystemExit("the builder does not hold every writer's events")


if __name__ == "__main__":
    main()
