"""What choosing the kept copy of an event (ingest/copies.py) costs an ingest at size.

A warehouse of N events (raw.events with its real columns, payloads of ~1 kB) and dlt's staging
table as a load leaves it, in three cases:

* `+1,000 new`: 1,000 new events, all inserted (every ingest: the cheap path, two counts);
* `+1,000 copies`: 1,000 copies of loaded ids from another machine, half of them winning
  (the comparison, the replacement and its record);
* `--full`: every line read again, nothing new (`bench ingest --full`: the comparison over all).

    python benchmarks/kept_copy.py --events 1000000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[1]
# benchmarks/ingest.py would shadow the `ingest` package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != REPO / "benchmarks"]
sys.path.insert(0, str(REPO))

from ingest.copies import settle_staged_copies  # noqa: E402

STAGING = "raw_staging"


def warehouse(path: Path, n: int) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute("create schema raw; create schema raw_staging")
        con.execute(
            """create table raw._dlt_loads as
            select 'load-' || i as load_id, 0 as status from range(3) t(i)"""
        )
        con.execute(
            f"""create table raw.events as select
                md5(i::varchar) || '-' || i as event_id, 'judge_verdict' as event_type,
                3::bigint as schema_version, 3::bigint as stored_schema_version,
                'run-' || (i % 20) as run_id, '2026-12-08T00:00:00Z' as occurred_at,
                '{{}}'::json as producer, ('{{"text": "' || repeat('x', 1000) || '"}}')::json
                    as payload,
                sha256(i::varchar) as content_sha256, sha256((i - 1)::varchar) as prev_sha256,
                'segment-' || (i // 100000) as segment, i as line_no, 'load-0' as _dlt_load_id
            from range({n}) t(i)"""
        )
        con.execute("create table raw_staging.events as select * from raw.events limit 0")


def stage(path: Path, sql: str) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute(f"insert into raw_staging.events {sql}")


def timed(path: Path) -> tuple[float, int]:
    started = time.perf_counter()
    replaced = settle_staged_copies(path, STAGING)
    return time.perf_counter() - started, replaced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    n = parser.parse_args().events
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "warehouse.duckdb"
        warehouse(path, n)
        # +1,000 new: dlt inserted them, and staged them
        new = (
            "select * replace ('new-' || line_no as event_id, 'load-1' as _dlt_load_id) "
            "from raw.events limit 1000"
        )
        with duckdb.connect(str(path)) as con:
            con.execute(f"insert into raw.events {new}")
        stage(path, new)
        fresh = timed(path)
        # +1,000 copies of loaded ids, other bytes: every other one sorts first
        stage(
            path,
            "select * replace (case when line_no % 2 = 0 then '0' else 'z' end || content_sha256 "
            "as content_sha256, 'load-2' as _dlt_load_id) from raw.events "
            "where _dlt_load_id = 'load-0' limit 1000",
        )
        copies = timed(path)
        stage(path, "select * replace ('load-2' as _dlt_load_id) from raw.events")
        full = timed(path)
    print(f"kept copy of an event, raw.events of {n:,} events")
    for case, (seconds, replaced) in (
        ("+1,000 new events", fresh),
        ("+1,000 copies, half winning", copies),
        (f"--full (all {n:,} again)", full),
    ):
        print(f"  {case:<32} {seconds:6.3f} s   {replaced:>4} replaced")


if __name__ == "__main__":
    main()
