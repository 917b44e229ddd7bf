"""Does a run finish as fast as the vendors' rate limits allow? The whole per-call path, every
registered search lane at once, against a loopback vendor with realistic latency.

    python benchmarks/harness.py [--questions 500] [--latency-p50-ms 800] [--latency-sigma 0.35]
                                 [--time-scale 1] [--tolerance 1.15] [--lanes a,b,...]

What a search run cannot beat is its slowest rate limit: lane L makes `questions` calls at its
documented client-side rate (collectors/search/lanes.py; lanes of one vendor key share one
limiter, so their rate group's budget is split between them), so the run needs at least
`bound = max over rate groups (calls in the group / group rate)` seconds. The harness runs every
lane's calls through the production path (SearchClient: throttle, tenacity retries, stock httpx
on httpcore with one keep-alive connection per slot, redaction, ProviderCallCompleted,
`make_event`, the batched EventSink into a real fsync'd EventLog) against
`tests.fakes.fast_server` (a separate process) holding each response for a log-normal
latency with median `--latency-p50-ms`, and prints the measured run time next to the bound.
It exits 1 when the run takes longer than `--tolerance` x bound.

The questions are the real SimpleQA test set (../shared/data/simpleqa), in file order.
`--time-scale K` multiplies every rate by K and divides the latency by K (the same run,
compressed K-fold; concurrency and Little's law unchanged) for a quick check. It compresses the
vendor's latency but not our client's, so on a loaded machine a compressed run can overshoot
the bound (K = 10, 100 questions, load average ~10: ratio 1.33); the figure that counts is
K = 1 (the default), which takes ~17 minutes for 9 lanes x 500 questions (measured 2026-12-01,
load average ~10: 1,010 s against a 1,000 s bound, ratio 1.010).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# This folder holds scripts named like our packages (ingest.py); keep it off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(REPO))

from collectors.http import EventSink  # noqa: E402
from collectors.qa.simpleqa import load_simpleqa  # noqa: E402
from collectors.search import LANES, SearchClient  # noqa: E402
from warehouse.events import make_event  # noqa: E402
from warehouse.log import EventLog  # noqa: E402
from warehouse.provenance import producer_for  # noqa: E402

BENCH_KEY = "bench-not-a-real-key-0000000000"
SIMPLEQA = REPO.parent / "shared" / "data" / "simpleqa" / "simple_qa_test_set.csv"


def start_vendor(latency_p50_ms: float, sigma: float) -> tuple[subprocess.Popen, int]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.fast_server",
            "--latency-p50-ms",
            str(latency_p50_ms),
            "--latency-sigma",
            str(sigma),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    line = process.stdout.readline().strip()
    if not line.startswith("PORT "):
        process.kill()
        raise RuntimeError(f"loopback vendor did not start: {line!r}")
    return process, int(line.split()[1])


def rate_bound(lanes: list[str], calls_per_lane: int, scale: float) -> tuple[float, dict]:
    """max over rate groups of (calls drawn from the group's limiter / its rate), and each."""
    calls: dict[str, int] = collections.Counter()
    rates: dict[str, float] = {}
    for lane in lanes:
        spec = LANES[lane]
        calls[spec.rate_group] += calls_per_lane
        rates[spec.rate_group] = spec.rate_per_s * scale
    groups = {group: calls[group] / rates[group] for group in calls}
    return max(groups.values()), groups


async def run(args: argparse.Namespace, port: int, log_dir: Path) -> dict:
    questions = [q.problem for q in load_simpleqa(SIMPLEQA).questions[: args.questions]]
    if len(questions) < args.questions:
        raise SystemExit(f"{SIMPLEQA}: only {len(questions)} questions")
    producer = producer_for({"benchmark": "harness", "lanes": ",".join(args.lanes)})
    base_urls = {
        spec.provider: f"http://127.0.0.1:{port}/{spec.provider}" for spec in LANES.values()
    }
    environ = {spec.key_env: BENCH_KEY for spec in LANES.values()}
    rates = {spec.rate_group: spec.rate_per_s * args.time_scale for spec in LANES.values()}
    finished: dict[str, float] = {}
    round_trips: list[float] = []
    failures: list[str] = []
    log = EventLog(log_dir)
    with log.writer(dedupe=True) as writer:
        sink = EventSink(writer)
        async with SearchClient(
            args.lanes, base_urls=base_urls, rate_per_s=rates, environ=environ
        ) as search:
            started = time.perf_counter()
            cpu_started = time.process_time()

            async def lane_worker(lane: str, items) -> None:
                for i in items:
                    result = await search.search(lane, questions[i], item_id=f"simpleqa-{i}")
                    payload = result.outcome.payload
                    if not result.outcome.completed:
                        failures.append(f"{lane} item {i}: {payload.error_message}")
                        continue
                    await sink.append(make_event(payload, run_id="harness", producer=producer))
                    round_trips.append(payload.timings.round_trip_ms)
                finished[lane] = max(finished.get(lane, 0.0), time.perf_counter() - started)

            workers = []
            for lane in args.lanes:
                items = iter(range(args.questions))  # shared by the lane's workers
                workers += [
                    lane_worker(lane, items) for _ in range(search.concurrency_for(LANES[lane]))
                ]
            await asyncio.gather(*workers)
            await sink.drain()
            elapsed = time.perf_counter() - started
            cpu = time.process_time() - cpu_started
        appended = writer.appended
    calls = args.questions * len(args.lanes)
    if failures:
        raise RuntimeError(f"{len(failures)} failed call(s), e.g. {failures[0]}")
    if appended != calls:
        raise RuntimeError(f"appended {appended} events, expected {calls}")
    return {
        "elapsed_s": elapsed,
        "calls": calls,
        "cpu_ms_per_call": cpu / calls * 1000,
        "round_trip_p50_ms": statistics.median(round_trips),
        "round_trip_p95_ms": statistics.quantiles(round_trips, n=20)[18],
        "lane_finished_s": finished,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--lanes", default=",".join(LANES), help="comma-separated lane names")
    parser.add_argument("--latency-p50-ms", type=float, default=800.0)
    parser.add_argument("--latency-sigma", type=float, default=0.35)
    parser.add_argument("--time-scale", type=float, default=1.0)
    parser.add_argument("--tolerance", type=float, default=1.15)
    args = parser.parse_args(argv)
    args.lanes = [lane for lane in args.lanes.split(",") if lane]
    unknown = sorted(set(args.lanes) - set(LANES))
    if unknown:
        parser.error(f"unknown lane(s) {unknown}; known: {sorted(LANES)}")

    bound, groups = rate_bound(args.lanes, args.questions, args.time_scale)
    latency_ms = args.latency_p50_ms / args.time_scale
    vendor, port = start_vendor(latency_ms, args.latency_sigma)
    print(
        f"{len(args.lanes)} lanes x {args.questions} questions, vendor latency p50 "
        f"{latency_ms:.0f} ms (sigma {args.latency_sigma}), time scale {args.time_scale:g}",
        flush=True,
    )
    try:
        with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
            figures = asyncio.run(run(args, port, Path(tmp) / "log"))
    finally:
        vendor.terminate()
        vendor.wait(timeout=10)

    for lane in args.lanes:
        spec = LANES[lane]
        print(
            f"  {lane:<24} rate group {spec.rate_group:<24} "
            f"{spec.rate_per_s * args.time_scale:>6.2f}/s  finished {figures['lane_finished_s'][lane]:8.1f} s"
            f"  (group bound {groups[spec.rate_group]:8.1f} s)"
        )
    ratio = figures["elapsed_s"] / bound
    verdict = "within" if ratio <= args.tolerance else "OVER"
    print(
        f"run: {figures['calls']} calls in {figures['elapsed_s']:.1f} s; bound max(calls/rate) "
        f"{bound:.1f} s; ratio {ratio:.3f} ({verdict} {args.tolerance:g}x); round trip p50 "
        f"{figures['round_trip_p50_ms']:.0f} ms, p95 {figures['round_trip_p95_ms']:.0f} ms; "
        f"client {figures['cpu_ms_per_call']:.2f} ms CPU/call",
        flush=True,
    )
    return 0 if ratio <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
