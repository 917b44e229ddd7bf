"""Ingest throughput: log append vs dlt ingest vs DuckDB's own read_json, side by side.

    python benchmarks/ingest.py [--events 1000000] [--dbt]
    python benchmarks/ingest.py --big-report [--report-mb 11] [--memory-limit 1GB]

Each phase runs in its own subprocess so its peak memory (max RSS) is its own.
Targets (issue #2): dlt ingest >= 50% of the read_json rate; peak memory < 2 GB.

--big-report (issue #25): one research report of --report-mb judged 40 criteria x 3 samples,
each verdict carrying a copy (tests/ingest/big_report.py), between two batches of another run;
prints what loaded, what was quarantined and ingest's peak RSS under BENCH_INGEST_MEMORY_LIMIT.
tests/ingest/test_oversized_events.py runs the same shape at an eighth of the size and limit.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# This file is named like the `ingest` package; keep its folder off the import path, and put this
# checkout first so a worktree measures its own code, not an editable install's.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(REPO))
SYSTEMS = ("alpha", "beta", "gamma", "delta", "epsilon")
WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "at",
    "from",
    "his",
    "her",
    "an",
    "which",
    "are",
    "data",
    "web",
    "page",
]


def generate(root: Path, n_events: int) -> None:
    """Synthetic extraction runs: per item one item_registered + one extraction per system."""
    from warehouse.events import (
        DatasetRef,
        ExtractionCompleted,
        ItemRegistered,
        RunStarted,
        SystemRef,
        make_event,
    )
    from warehouse.log import EventLog
    from warehouse.provenance import producer_for

    rng = random.Random(0)
    producer = producer_for({"benchmark": "ingest"})
    log = EventLog(root / "log")
    per_item = 1 + len(SYSTEMS)
    items = max(1, n_events // per_item)
    dataset = DatasetRef(
        name="synthetic", uri="memory://synthetic", sha256="0" * 64, item_count=items
    )
    run_id = "bench-ingest-run"
    with log.writer() as writer:
        writer.append(
            [
                make_event(
                    RunStarted(
                        benchmark="extraction",
                        spec={"n": items},
                        spec_sha256="0" * 64,
                        dataset=dataset,
                        systems=[SystemRef(name=s, version="1") for s in SYSTEMS],
                    ),
                    run_id=run_id,
                    producer=producer,
                )
            ]
        )
        batch = []
        for i in range(items):
            truth = " ".join(rng.choices(WORDS, k=40))
            batch.append(
                make_event(
                    ItemRegistered(
                        item_id=f"item-{i}",
                        dataset_sha256="0" * 64,
                        position=i,
                        ground_truth_text=truth,
                        anchors=[truth[:40]],
                        anchor_rule_version="1",
                    ),
                    run_id=run_id,
                    producer=producer,
                )
            )
            for system in SYSTEMS:
                text = " ".join(rng.choices(WORDS, k=30))
                batch.append(
                    make_event(
                        ExtractionCompleted(
                            item_id=f"item-{i}",
                            system=system,
                            system_version="1",
                            attempt=1,
                            source="engine",
                            render_path="raw_html",
                            input_sha256=None,
                            output_text=text,
                            output_bytes=len(text),
                            latency_ms=rng.uniform(1, 50),
                        ),
                        run_id=run_id,
                        producer=producer,
                    )
                )
            if len(batch) >= 10_000:
                writer.append(batch)
                batch = []
        writer.append(batch)


def phase(name: str, root: Path) -> None:
    if name == "ingest":
        from ingest.pipeline import ingest_log
        from warehouse.log import EventLog

        ingest_log(EventLog(root / "log"), root / "warehouse.duckdb", root / "dlt")
    elif name == "read_json":
        import duckdb

        with duckdb.connect(str(root / "read_json.duckdb")) as con:
            con.execute(
                "create table events as select * from read_json(?, format='newline_delimited')",
                [str(root / "log" / "*.jsonl")],
            )
    elif name == "generate":
        generate(root, int(sys.argv[4]))
    elif name == "generate-big-report":
        from tests.ingest.big_report import write_scenario

        write_scenario(root / "log", report_bytes=int(float(sys.argv[4]) * 1e6))


def timed_subprocess(name: str, root: Path, *extra: str, env=None) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of one phase; wait4 gives the child's own peak."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--phase", name, str(root), *extra],
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"phase {name} failed")
    return time.perf_counter() - start, usage.ru_maxrss / 1024


def big_report(report_mb: float, memory_limit: str, root: Path) -> dict:
    from tests.ingest.big_report import BIG_RUN, OTHER_RUN

    t_gen, _ = timed_subprocess("generate-big-report", root, str(report_mb))
    log_mb = sum(p.stat().st_size for p in (root / "log").glob("*.jsonl")) / 1e6
    t_ingest, m_ingest = timed_subprocess(
        "ingest", root, env={"BENCH_INGEST_MEMORY_LIMIT": memory_limit}
    )
    import duckdb

    with duckdb.connect(str(root / "warehouse.duckdb"), read_only=True) as con:
        (other,) = con.execute(
            "select count(*) from raw.events where run_id = ?", [OTHER_RUN]
        ).fetchone()
        (big,) = con.execute(
            "select count(*) from raw.events where run_id = ?", [BIG_RUN]
        ).fetchone()
        (quarantined,) = con.execute("select count(*) from raw.quarantined_events").fetchone()
    return {
        "report (MB)": report_mb,
        "verdicts (40 criteria x 3 samples)": 120,
        "log size (MB)": round(log_mb, 1),
        "generate + append (s)": round(t_gen, 1),
        "ingest memory limit": memory_limit,
        "ingest (s)": round(t_ingest, 1),
        "peak RSS ingest (MB)": round(m_ingest),
        "other run: events loaded / in log": f"{other} / 200",
        "big run: events loaded": big,
        "big run: quarantined (oversized)": quarantined,
        "big run: in log": 122,
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--phase":
        phase(sys.argv[2], Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument(
        "--dbt", action="store_true", help="also time `dbt build` on the ingested events"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary data root")
    parser.add_argument("--big-report", action="store_true", help="the oversized-event case")
    parser.add_argument("--report-mb", type=float, default=11.0)
    parser.add_argument("--memory-limit", default="1GB", help="BENCH_INGEST_MEMORY_LIMIT")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    try:
        if args.big_report:
            rows = big_report(args.report_mb, args.memory_limit, root)
            width = max(map(len, rows))
            for key, value in rows.items():
                print(f"{key:<{width}}  {value}")
            print(json.dumps(rows))
            return
        t_gen, m_gen = timed_subprocess("generate", root, str(args.events))
        lines = sum(
            p.read_bytes().count(b"\n")
            for p in (root / "log").glob("*.jsonl")
            if p.name != "MANIFEST.jsonl"
        )
        size_mb = sum(p.stat().st_size for p in (root / "log").glob("*.jsonl")) / 1e6
        t_read, m_read = timed_subprocess("read_json", root)
        t_ingest, m_ingest = timed_subprocess("ingest", root)
        rows = {
            "events": lines,
            "log size (MB)": round(size_mb, 1),
            "generate + append (s)": round(t_gen, 2),
            "log append rate (events/s)": round(lines / t_gen),
            "duckdb read_json (s)": round(t_read, 2),
            "read_json rate (events/s)": round(lines / t_read),
            "dlt ingest (s)": round(t_ingest, 2),
            "dlt ingest rate (events/s)": round(lines / t_ingest),
            "ingest / read_json rate": round(t_read / t_ingest, 3),
            "peak RSS generate (MB)": round(m_gen),
            "peak RSS read_json (MB)": round(m_read),
            "peak RSS ingest (MB)": round(m_ingest),
        }
        if args.dbt:
            env = {
                "BENCH_DUCKDB_PATH": str(root / "warehouse.duckdb"),
                "DBT_TARGET_PATH": str(root / "dbt-target"),
                "DBT_LOG_PATH": str(root / "dbt-logs"),
            }
            import os

            start = time.perf_counter()
            subprocess.run(
                [
                    str(Path(sys.executable).with_name("dbt")),
                    "build",
                    "--quiet",
                    "--project-dir",
                    "dbt_project",
                    "--profiles-dir",
                    "dbt_project",
                ],
                check=True,
                cwd=REPO,
                env={**os.environ, **env},
            )
            rows["dbt build (s)"] = round(time.perf_counter() - start, 2)
        width = max(map(len, rows))
        for key, value in rows.items():
            print(f"{key:<{width}}  {value}")
        print(json.dumps(rows))
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
