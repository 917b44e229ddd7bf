"""Reliability trials: kill -9 during ingest, concurrent writers on one run.

    python benchmarks/reliability.py [--kills 20] [--batch 20000] [--writer-trials 10]

Kill loop: each try appends a fresh batch of events, starts `bench ingest`'s load in a
subprocess, kills it with SIGKILL at a random moment of the load, and goes on; at the end one
ingest runs to completion. Every event id must be in `raw.events` exactly once.
Writers: two processes plan and write the same run at the same moment; one must be refused
(detected) and no id may be written twice.
Prints tries / detected / lost / duplicated per trial.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(REPO))

INGEST = """
import sys
from pathlib import Path
from ingest.pipeline import ingest_log
from warehouse.log import EventLog
home = Path(sys.argv[1])
result = ingest_log(EventLog(home / "log"), home / "warehouse.duckdb", home / "dlt")
print(f"repaired {result.duplicates_removed}", flush=True)
"""

WRITER = """
import sys, time
from pathlib import Path
from warehouse.events import ItemRegistered, make_event
from warehouse.log import EventLog, RunLocked
from warehouse.provenance import producer_for
log_dir, run_id, units, start_at = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
producer = producer_for({"benchmark": "reliability"})
def event(i):
    return make_event(ItemRegistered(item_id=f"item-{i}", dataset_sha256="0" * 64, position=i,
        ground_truth_text=f"text {i}", anchors=[], anchor_rule_version="1"),
        run_id=run_id, producer=producer)
log = EventLog(log_dir)
done = log.known_event_ids()
work = [i for i in range(units) if event(i).event_id not in done]
time.sleep(max(0.0, start_at - time.time()))
try:
    with log.writer() as writer:
        for i in work:
            writer.append([event(i)])
    print("ok")
except RunLocked:
    print("refused")
"""


def append_batch(log_dir: Path, start: int, count: int) -> None:
    from warehouse.events import ItemRegistered, make_event
    from warehouse.log import EventLog
    from warehouse.provenance import producer_for

    producer = producer_for({"benchmark": "reliability"})
    text = "a sentence of about the size a page's text has " * 10
    with EventLog(log_dir).writer(dedupe=False) as writer:
        writer.append(
            make_event(
                ItemRegistered(
                    item_id=f"item-{i}",
                    dataset_sha256="0" * 64,
                    position=i,
                    ground_truth_text=f"{i} {text}",
                    anchors=[],
                    anchor_rule_version="1",
                ),
                run_id="reliability-ingest",
                producer=producer,
            )
            for i in range(start, start + count)
        )


def ids_in_warehouse(db: Path) -> tuple[int, int]:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("select count(*), count(distinct event_id) from raw.events").fetchone()


def kill_loop(kills: int, batch: int, rng: random.Random) -> dict[str, int]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        appended, killed_mid_load = 0, 0
        # one clean ingest first: how long a load of one batch takes
        append_batch(home / "log", 0, batch)
        appended += batch
        clock = time.monotonic()
        subprocess.run([sys.executable, "-c", INGEST, str(home)], env=env, check=True)
        load_s = time.monotonic() - clock
        for _ in range(kills):
            append_batch(home / "log", appended, batch)
            appended += batch
            proc = subprocess.Popen([sys.executable, "-c", INGEST, str(home)], env=env)
            time.sleep(rng.uniform(0.05, load_s))
            if proc.poll() is None:
                killed_mid_load += 1
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        final = subprocess.run(
            [sys.executable, "-c", INGEST, str(home)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        repaired = int(final.stdout.split("repaired", 1)[1].split()[0])
        rows, distinct = ids_in_warehouse(home / "warehouse.duckdb")
    return {
        "tries": kills,
        "detected": killed_mid_load,  # kills that landed while the load was running
        "lost": appended - distinct,
        "duplicated": rows - distinct,
        "load_s": round(load_s, 2),
        "repaired": repaired,  # duplicate rows an interrupted load left, removed at the end
    }


def writer_trials(trials: int, units: int) -> dict[str, int]:
    from collections import Counter

    from warehouse.log import EventLog

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    refused = lost = duplicated = 0
    for trial in range(trials):
        with tempfile.TemporaryDirectory() as tmp:
            log_dir = Path(tmp) / "log"
            start_at = time.time() + 1.5
            procs = [
                subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        WRITER,
                        str(log_dir),
                        f"run-{trial}",
                        str(units),
                        str(start_at),
                    ],
                    env=env,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                for _ in range(2)
            ]
            outcomes = [p.communicate()[0].strip() for p in procs]
            refused += outcomes.count("refused")
            counts = Counter(e["event_id"] for _, e in EventLog(log_dir).read(upcasted=False))
            duplicated += sum(n - 1 for n in counts.values())
            lost += units - len(counts)
    return {"tries": trials, "detected": refused, "lost": lost, "duplicated": duplicated}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--batch", type=int, default=20_000)
    parser.add_argument("--writer-trials", type=int, default=10)
    parser.add_argument("--units", type=int, default=300)
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"load average {os.getloadavg()[0]:.2f}")
    results = {
        "kill -9 during ingest": kill_loop(args.kills, args.batch, rng),
        "two writers on one run": writer_trials(args.writer_trials, args.units),
    }
    print(f"{'trial':<26} {'tries':>6} {'detected':>9} {'lost':>6} {'duplicated':>11}")
    for name, r in results.items():
        print(f"{name:<26} {r['tries']:>6} {r['detected']:>9} {r['lost']:>6} {r['duplicated']:>11}")
    extra = results["kill -9 during ingest"]
    print(
        f"(one batch of {args.batch} events loads in {extra['load_s']} s; detected = kills that "
        f"landed mid-load / refused writers; the final ingest removed {extra['repaired']} "
        "duplicate rows left by interrupted loads)"
    )


if __name__ == "__main__":
    main()
