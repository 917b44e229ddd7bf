"""Throughput of the whole per-call path against a zero-latency loopback vendor.

    python benchmarks/harness.py [--calls 10000] [--concurrency 64] [--sink batched|direct]
                                 [--with-chunks] [--repeat 1] [--baseline]
                                 [--server fast|threaded]

Per call: throttle grant (aiolimiter + semaphore, set high enough never to throttle), the
tenacity retry wrapper, one HTTP exchange with a loopback vendor (a separate process, so the two
do not share a GIL), normalisation, the ProviderCallCompleted payload, `make_event`, and the
append to a real EventLog in a temp dir (fsync'd). `--sink batched` appends through
`collectors.http.EventSink` (group commit, one fsync per batch); `--sink direct` calls
`LogWriter.append([event])` per call on the event loop, as a naive runner would.
`--baseline` first times bare httpx posts to the same server, on httpx's stock transport
(httpcore) and on ours (`collectors.http.transport`): the floor this path stands on.

The vendor is `collectors.testing.fast_server` (asyncio, keep-alive, the same vendor-shaped
bodies as the test fake, no faults); `--server threaded` uses the fault-injecting
`FakeVendorServer` (a thread per connection), which costs more CPU per request than our client.
Besides calls/s it prints the client process's CPU time per call and the server's, which stay
meaningful when other work shares the machine. Target (issue #3): >= 1,000 calls/s on a 2-core
machine.
"""

from __future__ import annotations

import argparse
import asyncio
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

from collectors.http import EventSink, slot_clients  # noqa: E402
from collectors.search import LANES, SearchClient  # noqa: E402
from warehouse.events import make_event  # noqa: E402
from warehouse.log import EventLog  # noqa: E402
from warehouse.provenance import producer_for  # noqa: E402

BENCH_KEY = "bench-not-a-real-key-0000000000"


SERVERS = {"fast": "collectors.testing.fast_server", "threaded": "collectors.testing.fake_server"}


def start_fake_server(kind: str = "fast") -> tuple[subprocess.Popen, int]:
    process = subprocess.Popen(
        [sys.executable, "-c", f"from {SERVERS[kind]} import main; main()"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    line = process.stdout.readline().strip()
    if not line.startswith("PORT "):
        process.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return process, int(line.split()[1])


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of another process (Linux /proc), None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def bare_httpx(args: argparse.Namespace, port: int, wire: str) -> dict[str, float]:
    """The floor: the same requests with plain httpx (one connection per slot), nothing else."""
    clients = slot_clients(args.concurrency, transport=wire)
    body = {"query": "", "type": "auto", "numResults": 10, "contents": {"summary": True}}
    next_item = iter(range(args.calls))

    async def worker(client) -> None:
        for i in next_item:
            response = await client.post(
                f"http://127.0.0.1:{port}/exa/search",
                json={**body, "query": f"benchmark question {i}"},
                headers={"x-api-key": BENCH_KEY},
            )
            response.json()

    started, cpu_started = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker(client) for client in clients))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    await asyncio.gather(*(client.aclose() for client in clients))
    return {"calls_per_s": args.calls / elapsed, "cpu_ms_per_call": cpu / args.calls * 1000}


async def run_once(args: argparse.Namespace, port: int, log_dir: Path) -> dict[str, float]:
    spec = LANES[args.lane]
    producer = producer_for({"benchmark": "harness", "lane": args.lane})
    run_id = "bench-harness-run"
    log = EventLog(log_dir)
    round_trips: list[float] = []
    whole_calls: list[float] = []
    next_item = iter(range(args.calls))
    with log.writer(dedupe=True) as writer:
        sink = EventSink(writer)

        async def append(event) -> None:
            if args.sink == "batched":
                await sink.append(event)
            else:
                writer.append([event])

        async with SearchClient(
            [args.lane],
            base_urls={spec.provider: f"http://127.0.0.1:{port}/{spec.provider}"},
            rate_per_s=1e9,
            concurrency=args.concurrency,
            environ={spec.key_env: BENCH_KEY},
        ) as search:

            async def worker() -> None:
                for i in next_item:
                    result = await search.search(
                        args.lane, f"benchmark question {i}", item_id=f"item-{i}"
                    )
                    payload = result.outcome.payload
                    if not result.outcome.completed:
                        raise RuntimeError(f"call {i} failed: {payload.error_message}")
                    event = make_event(payload, run_id=run_id, producer=producer)
                    await append(event)
                    if args.with_chunks:
                        chunks = result.chunks_payload(event.event_id)
                        await append(make_event(chunks, run_id=run_id, producer=producer))
                    round_trips.append(payload.timings.round_trip_ms)
                    whole_calls.append(payload.timings.whole_call_ms)

            started, cpu_started = time.perf_counter(), time.process_time()
            await asyncio.gather(*(worker() for _ in range(args.concurrency)))
            await sink.drain()
            elapsed = time.perf_counter() - started
            cpu = time.process_time() - cpu_started
        appended = writer.appended
    expected = args.calls * (2 if args.with_chunks else 1)
    if appended != expected:
        raise RuntimeError(f"appended {appended} events, expected {expected}")
    quantiles = statistics.quantiles(round_trips, n=20)
    return {
        "calls_per_s": args.calls / elapsed,
        "cpu_ms_per_call": cpu / args.calls * 1000,
        "elapsed_s": elapsed,
        "events": appended,
        "round_trip_p50_ms": statistics.median(round_trips),
        "round_trip_p95_ms": quantiles[18],
        "whole_call_p50_ms": statistics.median(whole_calls),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--lane", default="exa_search_auto", choices=sorted(LANES))
    parser.add_argument("--sink", default="batched", choices=("batched", "direct"))
    parser.add_argument("--with-chunks", action="store_true", help="also append chunks_normalized")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--baseline", action="store_true", help="first time bare httpx posts (the floor)"
    )
    parser.add_argument(
        "--server",
        default="fast",
        choices=sorted(SERVERS),
        help="the loopback vendor: asyncio keep-alive (fast) or the test fake (threaded)",
    )
    args = parser.parse_args(argv)

    server, port = start_fake_server(args.server)
    print(f"vendor: {SERVERS[args.server]} (pid {server.pid}, port {port})", flush=True)

    def timed(work):
        server_cpu = process_cpu_s(server.pid)
        figures = asyncio.run(work)
        if server_cpu is not None:
            spent = process_cpu_s(server.pid) - server_cpu
            figures["server_cpu_ms_per_call"] = spent / args.calls * 1000
        return figures

    def server_note(figures) -> str:
        if "server_cpu_ms_per_call" not in figures:
            return ""
        return f", server {figures['server_cpu_ms_per_call']:.2f} ms CPU/call"

    try:
        if args.baseline:
            for wire in ("httpcore", "keepalive"):
                floor = timed(bare_httpx(args, port, wire))
                print(
                    f"bare httpx ({wire} transport): {args.calls} posts, concurrency "
                    f"{args.concurrency}: {floor['calls_per_s']:,.0f} calls/s, client "
                    f"{floor['cpu_ms_per_call']:.2f} ms CPU/call{server_note(floor)}",
                    flush=True,
                )
        for run in range(1, args.repeat + 1):
            with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
                figures = timed(run_once(args, port, Path(tmp) / "log"))
            print(
                f"run {run}: {args.calls} calls, lane {args.lane}, concurrency {args.concurrency}, "
                f"sink {args.sink}{' +chunks' if args.with_chunks else ''}"
                ": "
                f"{figures['calls_per_s']:,.0f} calls/s ({figures['elapsed_s']:.2f} s, "
                f"{figures['events']} events appended; client "
                f"{figures['cpu_ms_per_call']:.2f} ms CPU/call{server_note(figures)}); "
                f"round trip p50 "
                f"{figures['round_trip_p50_ms']:.2f} ms, p95 {figures['round_trip_p95_ms']:.2f} ms; "
                f"whole call p50 {figures['whole_call_p50_ms']:.2f} ms",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
