"""The warehouse in DuckDB's old storage format against the current one, on one log (issue #26).

    python benchmarks/storage_format.py [--verdicts 100000] [--rounds 2] [--keep DIR]

DuckDB creates a file in v1.0's storage format unless asked otherwise; that format stores long
strings (the event payloads) uncompressed. bench's ingest creates `warehouse.duckdb` in the
current format (dbt_project/profiles.yml `storage_compatibility_version`); a data root from
before keeps its old file until `bench rebuild`. This generates one DRACO-shaped log with
benchmarks/scale.py's generator, then, per round and alternating, ingests, builds, publishes
and rescores it in a fresh data root whose warehouse is created in the old format (a bare
`duckdb.connect` before ingest) or by ingest, and prints wall time, peak RSS and bytes side by
side, then whether every mart of the two snapshots is identical (`table_checksums`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import duckdb  # noqa: E402
from scale import BENCH, GENERATORS, timed  # noqa: E402

FORMATS = ("old", "current")
STEPS = (
    ("ingest", ("ingest",)),
    ("build", ("build",)),
    ("publish", ("publish",)),
    ("rescore", ("rescore", "--draco-penalty-floor", "-100")),
)


def generate(log_home: Path, verdicts: int) -> None:
    script = str(Path(__file__).resolve().with_name("scale.py"))
    subprocess.run([sys.executable, script, "--internal-beside", str(log_home)], check=True)
    writers = [
        subprocess.Popen(
            [sys.executable, script, "--internal-generate", str(log_home), str(verdicts), str(p)],
            stdout=subprocess.DEVNULL,
        )
        for p in range(GENERATORS)
    ]
    if any(w.wait() != 0 for w in writers):
        raise SystemExit("generating the log failed")


def storage_version(db: Path) -> str:
    with duckdb.connect(str(db), read_only=True) as con:
        (tags,) = con.execute(
            "select tags from duckdb_databases() where database_name = current_database()"
        ).fetchone()
    return tags.get("storage_version", "?")


def measure(log_home: Path, home: Path, fmt: str) -> dict:
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    shutil.copytree(log_home / "log", home / "log")
    shutil.copytree(log_home / "corpora", home / "corpora")
    if fmt == "old":
        duckdb.connect(str(home / "warehouse.duckdb")).close()  # what dlt alone creates
    figures: dict = {step: timed(home, str(BENCH), *argv) for step, argv in STEPS}
    figures["warehouse_mb"] = (home / "warehouse.duckdb").stat().st_size / 2**20
    figures["format"] = storage_version(home / "warehouse.duckdb")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="Write the data roots here and keep them.")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-format-"))
    try:
        log_home = root / "log-only"
        if not (log_home / "log").exists():
            generate(log_home, args.verdicts)
        rounds = []
        for _ in range(args.rounds):
            rounds.append({fmt: measure(log_home, root / fmt, fmt) for fmt in FORMATS})
        report(rounds, root, os.getloadavg()[0])
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


def report(rounds: list[dict], root: Path, load: float) -> None:
    from warehouse.publish import table_checksums

    def cells(fmt: str, pick) -> str:
        return " / ".join(pick(r[fmt]) for r in rounds)

    print(f"{len(rounds)} round(s), alternating; load average {load:.2f} at the end")
    print(f"{'':<34}{'old format':>32}{'current format':>32}")
    rows = [
        ("storage version", lambda f: f["format"]),
        ("warehouse.duckdb (MB)", lambda f: f"{f['warehouse_mb']:,.0f}"),
    ]
    for step, _ in STEPS:
        rows.append((f"bench {step} (s)", lambda f, s=step: f"{f[s][0]:.1f}"))
        rows.append((f"bench {step} peak RSS (MB)", lambda f, s=step: f"{f[s][1]:,.0f}"))
    for label, pick in rows:
        print(f"{label:<34}{cells('old', pick):>32}{cells('current', pick):>32}")
    old = table_checksums(root / "old" / "serve.duckdb")
    new = table_checksums(root / "current" / "serve.duckdb")
    same = sum(old[name] == new.get(name) for name in old)
    print(f"marts identical (last round): {same} of {len(old)} (current has {len(new)})")


if __name__ == "__main__":
    main()
