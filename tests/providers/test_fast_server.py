"""The harness's loopback vendor holds responses for the latency it is told to (log-normal,
seeded), keeps their order on a connection, and answers in the vendors' shape."""

from __future__ import annotations

import asyncio
import statistics
import time

import httpx

from tests.fakes.fast_server import Latency, serve


def test_latency_median_and_spread_are_the_configured_ones():
    latency = Latency(0.8, 0.35, seed=1)
    draws = sorted(latency.draw() for _ in range(4001))
    assert abs(statistics.median(draws) - 0.8) < 0.03
    assert 1.3 < draws[int(0.95 * len(draws))] / 0.8 < 2.0  # p95 ~ exp(1.645 * 0.35) = 1.78x
    assert Latency(0.0).draw() == 0.0


def test_served_responses_are_held_for_the_latency():
    async def scenario():
        ports: list[int] = []
        server = asyncio.create_task(serve(0, ready=ports.append, latency=Latency(0.05, 0.2)))
        while not ports:
            await asyncio.sleep(0.01)
        elapsed = []
        async with httpx.AsyncClient() as client:
            for i in range(15):
                started = time.perf_counter()
                response = await client.post(
                    f"http://127.0.0.1:{ports[0]}/exa/search",
                    json={"query": f"q{i}", "numResults": 2},
                    headers={"x-api-key": "k"},
                )
                elapsed.append(time.perf_counter() - started)
                assert response.status_code == 200 and len(response.json()["results"]) == 2
        server.cancel()
        return elapsed

    elapsed = asyncio.run(scenario())
    assert statistics.median(elapsed) >= 0.04  # held ~50 ms, not answered at once
