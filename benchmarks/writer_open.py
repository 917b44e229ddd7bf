"""What a log writer pays before its first event: the ids already in the log (issue #26).

    python benchmarks/scale.py --verdicts 1000000 --keep /tmp/s1m      # once: a 1M log
    python benchmarks/writer_open.py --log /tmp/s1m/scale-1000000/log [--repeat 3]

Every `bench run`, import and correction opens a writer, which must not write an event the
log already holds, so it first collects every event id in the log (`EventLog.known_event_ids`).
A compressed segment has an id index beside it (`<segment>.ids.zst`, its
sha256 in the segment's `compress` MANIFEST record); without one the writer decompresses and
scans the segment.

The log is copied (the original is not changed), its segments made plain again and compressed
by this checkout (which writes the indexes); then both ways are timed on that copy: with the
indexes, and with them moved aside (the reference: what a writer did before). The ids found
must be the same.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from warehouse.log import EventLog, compressed_path, id_index_path


def plain_copy(source: Path, target: Path) -> EventLog:
    """The log at `target`, every segment plain and no `compress` record: as before ingest
    compressed it."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("locks", "*.ids.zst"))
    log = EventLog(target)
    for segment in log.segments():
        if log.is_compressed(segment):
            segment.write_bytes(log.segment_bytes(segment))
            compressed_path(segment).unlink()
    records = [json.loads(line) for line in log.manifest_path.read_text().splitlines()]
    kept = [json.dumps(r) for r in records if r.get("op") != "compress"]
    log.manifest_path.write_text("".join(f"{line}\n" for line in kept))
    return log


def timed_ids(log: EventLog, repeat: int) -> tuple[float, set[str]]:
    times, ids = [], set()
    for _ in range(repeat):
        started = time.perf_counter()
        ids = log.known_event_ids()
        times.append(time.perf_counter() - started)
    return statistics.median(times), ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/writer-open/log"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    log = plain_copy(args.log, args.work)
    started = time.perf_counter()
    compressed = log.compress_sealed()
    compress_s = time.perf_counter() - started
    indexes = [id_index_path(s) for s in log.segments() if id_index_path(s).exists()]
    index_mb = sum(p.stat().st_size for p in indexes) / 1e6

    indexed_s, indexed_ids = timed_ids(log, args.repeat)
    aside = args.work.parent / "indexes-aside"
    aside.mkdir(exist_ok=True)
    for index in indexes:
        index.replace(aside / index.name)
    scanned_s, scanned_ids = timed_ids(log, args.repeat)
    for index in aside.iterdir():
        index.replace(args.work / index.name)
    if indexed_ids != scanned_ids:
        raise SystemExit("the indexes and the segments disagree on the ids")

    print(
        f"{len(scanned_ids):,} event ids in {len(log.segments())} segments; compressing "
        f"{len(compressed)} of them with their indexes took {compress_s:.1f} s; "
        f"indexes {index_mb:.1f} MB"
    )
    print(f"{'known_event_ids, median of ' + str(args.repeat):<36} | {'seconds':>8}")
    print(f"{'reference: decompress and scan':<36} | {scanned_s:8.2f}")
    print(f"{'this checkout: the id indexes':<36} | {indexed_s:8.2f}")


if __name__ == "__main__":
    main()
