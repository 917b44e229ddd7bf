"""Reliability trials: kill -9 during ingest, concurrent writers on one run.

    python benchmarks/reliability.py [--kills 20] [--batch 20000] [--writer-trials 10]

Kill loop: each try appends a fresh batch of events (item texts, a few long research reports
among them), starts `bench ingest` in a subprocess, kills it with SIGKILL at a random moment,
and goes on; at the end one `bench ingest` runs to completion. An ingest that fails by itself
(not killed) is a wedge: before issue #25 one kill in eight left dlt's package half-moved and
every later ingest failed. Every event id must be in `raw.events` exactly once.
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

BENCH = str(Path(sys.executable).with_name("bench"))

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


def append_batch(log_dir: Path, start: int, count: int, report_every: int = 0) -> None:
    """`count` items; with `report_every`, every so many of them is a 300 KB research report
    instead (long lines take ingest's other path)."""
    from warehouse.events import ItemRegistered, ResearchCompleted, make_event
    from warehouse.log import EventLog
    from warehouse.provenance import producer_for

    producer = producer_for({"benchmark": "reliability"})
    text = "a sentence of about the size a page's text has " * 10

    def event(i: int):
        if report_every and i % report_every == 0:
            return make_event(
                ResearchCompleted(
                    lane="reliability-research",
                    provider="vendor",
                    item_id=f"task-{i}",
                    attempt=1,
                    raw_output=f"{i} " + text * 640,
                    instruction_sha256="0" * 64,
                    submitted_at="2026-12-01T00:00:00Z",
                    finished_at="2026-12-01T00:10:00Z",
                    wall_clock_ms=600_000.0,
                ),
                run_id="reliability-ingest",
                producer=producer,
            )
        return make_event(
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

    with EventLog(log_dir).writer(dedupe=False) as writer:
        writer.append(event(i) for i in range(start, start + count))


def bench_ingest(home: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [BENCH, "ingest", "--home", str(home)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def pending_packages(home: Path) -> int:
    """dlt packages a kill left between extract and load."""
    working = home / "dlt" / "bench_events"
    return sum(
        1
        for folder in ("normalize/extracted", "load/normalized")
        for p in (working / folder).glob("*")
        if p.is_dir()
    )


def ids_in_warehouse(db: Path) -> tuple[int, int]:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("select count(*), count(distinct event_id) from raw.events").fetchone()


def _extract_folders(extract_dir: Path) -> set[str]:
    """dlt extract's temporary folders (normalize/<random>), the `extracted` one aside."""
    if not extract_dir.is_dir():
        return set()
    return {p.name for p in extract_dir.iterdir() if p.is_dir() and p.name != "extracted"}


def timed_clean_ingest(home: Path, env: dict[str, str]) -> tuple[int, str, float, float]:
    """Run `bench ingest` to the end; its exit code, output, and when (seconds after start) dlt's
    extract began (its temporary folder appeared) and the command ended."""
    extract_dir = home / "dlt" / "bench_events" / "normalize"
    before = _extract_folders(extract_dir)  # a killed extract's, which old code left behind
    clock = time.monotonic()
    proc = bench_ingest(home, env)
    extract_at = None
    while proc.poll() is None:
        if extract_at is None and _extract_folders(extract_dir) - before:
            extract_at = time.monotonic() - clock
        time.sleep(0.005)
    ended_at = time.monotonic() - clock
    return proc.returncode, proc.stdout.read(), extract_at or 0.0, ended_at


def kill_loop(
    kills: int, batch: int, rng: random.Random, report_every: int = 500, clean_every: int = 4
) -> dict[str, int]:
    """`kills` ingests killed with SIGKILL at a random moment of dlt's part of the run (from a
    little before extract starts, where recovery runs, to the end), as timed on the last
    ingest let run to the end; after every `clean_every` kills one such clean ingest runs (a
    wedge shows there, and the times grow with the log)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        appended, killed, wedges, left_pending, clean = 0, 0, 0, 0, 0
        failures: list[str] = []

        def clean_ingest() -> tuple[float, float]:
            nonlocal wedges, left_pending, clean
            left_pending += pending_packages(home) > 0
            clean += 1
            code, output, extract_at, ended_at = timed_clean_ingest(home, env)
            if code != 0:  # failed by itself: the data root is wedged
                wedges += 1
                failures.append(output[-2000:])
            return extract_at, ended_at

        append_batch(home / "log", 0, batch, report_every)
        appended += batch
        extract_at, ended_at = clean_ingest()
        if wedges:
            raise SystemExit(f"the first, clean ingest failed:\n{failures[0]}")
        for attempt in range(kills):
            if attempt and attempt % clean_every == 0:
                extract_at, ended_at = clean_ingest()
            append_batch(home / "log", appended, batch, report_every)
            appended += batch
            left_pending += pending_packages(home) > 0
            proc = bench_ingest(home, env)
            time.sleep(rng.uniform(max(0.05, extract_at - 0.5), ended_at * 1.05))
            if proc.poll() is None:
                killed += 1
                os.kill(proc.pid, signal.SIGKILL)
            elif proc.returncode != 0:
                wedges += 1
                failures.append(proc.stdout.read()[-2000:])
            proc.wait()
        clean_ingest()
        rows, distinct = ids_in_warehouse(home / "warehouse.duckdb")
    for failure in failures[:3]:
        print(f"--- a wedged ingest ended with:\n{failure}", file=sys.stderr)
    return {
        "tries": kills,
        "detected": killed,  # kills that landed while `bench ingest` was running
        "wedges": wedges,  # ingests that failed by themselves after a kill
        "left_pending": left_pending,  # ingests that started with dlt packages a kill left
        "clean": clean,  # ingests let run to the end, the first and the last included
        "in_log": appended,
        "loaded": distinct,
        "lost": appended - distinct,
        "duplicated": rows - distinct,
        "dlt_s": round(ended_at - extract_at, 2),
        "load_s": round(ended_at, 2),
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
    parser.add_argument(
        "--report-every", type=int, default=500, help="one 300 KB report per this many events"
    )
    parser.add_argument("--writer-trials", type=int, default=10)
    parser.add_argument("--units", type=int, default=300)
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"load average {os.getloadavg()[0]:.2f}")
    results = {
        "kill -9 during ingest": kill_loop(args.kills, args.batch, rng, args.report_every),
        "two writers on one run": writer_trials(args.writer_trials, args.units),
    }
    print(f"{'trial':<26} {'tries':>6} {'detected':>9} {'lost':>6} {'duplicated':>11}")
    for name, r in results.items():
        print(f"{name:<26} {r['tries']:>6} {r['detected']:>9} {r['lost']:>6} {r['duplicated']:>11}")
    extra = results["kill -9 during ingest"]
    print(
        f"(the last `bench ingest` to run to the end took {extra['load_s']} s, "
        f"{extra['dlt_s']} s of it from extract on; "
        "detected = kills that landed mid-ingest / refused writers)"
    )
    print(
        f"kill loop: {extra['detected']} kills, {extra['clean']} ingests run to the end, "
        f"{extra['wedges']} wedges, "
        f"{extra['left_pending']} ingests found dlt packages a kill left; "
        f"events in log {extra['in_log']}, in raw.events {extra['loaded']} "
        f"(lost {extra['lost']}, duplicated {extra['duplicated']})"
    )


if __name__ == "__main__":
    main()
