"""Log append through `LogWriter` vs a bare loop writing the same canonical lines (issue #8).

    python benchmarks/log_append.py [--events 200000] [--batch 1000]

Both write the same lines to a fresh file with the same fsync policy (one flush + fsync per
batch, as `LogWriter.append` does per call). The events are built first and not timed: the
figure is the writer's own cost (dedupe, run lock, secret scrub, chain, write). Target: the
writer at least 50% of the bare loop's rate.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from warehouse.canonical import canonical_json, sha256_hex
from warehouse.events import ItemRegistered, make_event
from warehouse.log import EventLog, genesis_sha256
from warehouse.provenance import producer_for


def build_events(n: int):
    """Item registrations with about a kilobyte of text each (a typical event's size)."""
    producer = producer_for({"benchmark": "log_append"})
    text = "The report names three sources and quotes each of them. " * 18
    return [
        make_event(
            ItemRegistered(
                item_id=f"item-{i}",
                dataset_sha256="0" * 64,
                position=i,
                ground_truth_text=f"{i} {text}",
                anchors=[text[:40]],
                anchor_rule_version="1",
            ),
            run_id=f"run-{i % 10}",
            producer=producer,
        )
        for i in range(n)
    ]


def bare_loop(events, path: Path, batch: int) -> float:
    bodies = [event.model_dump() for event in events]  # not timed: the loop gets dicts
    start = time.perf_counter()
    prev = genesis_sha256(path.name)
    with open(path, "wb") as handle:
        for at in range(0, len(bodies), batch):
            for body in bodies[at : at + batch]:
                body["prev_sha256"] = prev
                line = canonical_json(body).encode("utf-8")
                handle.write(line + b"\n")
                prev = sha256_hex(line)
            handle.flush()
            os.fsync(handle.fileno())
    return time.perf_counter() - start


def through_writer(events, log_dir: Path, batch: int) -> float:
    log = EventLog(log_dir)
    start = time.perf_counter()
    with log.writer() as writer:
        for at in range(0, len(events), batch):
            writer.append(events[at : at + batch])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()
    events = build_events(args.events)
    with tempfile.TemporaryDirectory() as tmp:
        bare_s = bare_loop(events, Path(tmp) / "bare.jsonl", args.batch)
        writer_s = through_writer(events, Path(tmp) / "log", args.batch)
    bare_rate, writer_rate = args.events / bare_s, args.events / writer_s
    print(f"events {args.events}, batch {args.batch}, load average {os.getloadavg()[0]:.2f}")
    print(f"bare loop (canonical JSON of dicts + write)  : {bare_rate:,.0f} events/s")
    print(f"LogWriter.append:                               {writer_rate:,.0f} events/s")
    print(f"ratio writer / bare: {writer_rate / bare_rate:.0%} (target >= 50%)")


if __name__ == "__main__":
    main()
