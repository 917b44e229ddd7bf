"""Pieces of the HTTP layer on their own: redaction, Retry-After, throttle, event sink."""

from __future__ import annotations

import asyncio
import time
from email.utils import formatdate

import pytest

from collectors.http import (
    REDACTED,
    EventSink,
    Redactor,
    Throttle,
    parse_retry_after,
    rate_limiter,
    redact,
)
from warehouse.events import RunFinished, make_event
from warehouse.log import EventLog
from warehouse.provenance import producer_for

KEY = "sk-canary-Ab+/c=d&e 9f"


# --- redaction ---------------------------------------------------------------------------------


def test_auth_headers_are_replaced_whatever_their_value():
    headers = Redactor([KEY]).headers(
        {
            "Authorization": "Bearer something-else",
            "X-API-Key": "x",
            "X-Subscription-Token": "y",
            "Cookie": "session=1",
            "Accept": "application/json",
        }
    )
    assert headers == {
        "authorization": REDACTED,
        "x-api-key": REDACTED,
        "x-subscription-token": REDACTED,
        "cookie": REDACTED,
        "accept": "application/json",
    }


def test_key_like_query_parameters_and_url_credentials_are_replaced():
    redactor = Redactor([])
    url = "https://user:pw@api.example.com/s?q=a%20b&api_key=123&Key=9&token=t&count=10"
    assert redactor.url(url) == (
        f"https://{REDACTED}@api.example.com/s?q=a%20b&api_key={REDACTED}&Key={REDACTED}"
        f"&token={REDACTED}&count=10"
    )


@pytest.mark.parametrize(
    "carrier",
    [
        KEY,
        f"prefix {KEY} suffix",
        "q=sk-canary-Ab%2B%2Fc%3Dd%26e%209f",  # percent-encoded
        "q=sk-canary-Ab%2B%2Fc%3Dd%26e+9f",  # form-encoded
        '{"echo": "sk-canary-Ab+\\/c=d&e 9f"}',  # JSON with escaped slashes
    ],
)
def test_the_key_string_is_replaced_anywhere_in_any_encoding(carrier):
    assert "sk-canary" not in Redactor([KEY]).text(carrier)


def test_json_bodies_are_redacted_recursively_keys_included():
    body = {"query": f"my key is {KEY}", KEY: [1, {"nested": KEY}], "n": 10, "ok": True}
    assert redact(body, [KEY]) == {
        "query": f"my key is {REDACTED}",
        REDACTED: [1, {"nested": REDACTED}],
        "n": 10,
        "ok": True,
    }


def test_the_longer_of_two_overlapping_keys_is_replaced_whole():
    assert Redactor(["abc", "abcdef"]).text("xx abcdef yy") == f"xx {REDACTED} yy"


def test_empty_keys_redact_nothing():
    assert Redactor(["", ""]).text("plain text") == "plain text"


def test_recorded_request_carries_no_key():
    recorded = Redactor([KEY]).request(
        "post",
        f"https://api.example.com/search?apikey={KEY}",
        {"x-api-key": KEY, "user-agent": f"agent {KEY}"},
        {"query": KEY},
    )
    assert recorded.method == "POST"
    assert "sk-canary" not in recorded.model_dump_json()


# --- Retry-After --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("3", 3.0), (" 0 ", 0.0), ("1.5", 1.5), ("-4", 0.0), (None, None), ("", None), ("soon", None)],
)
def test_retry_after_delta_seconds(value, expected):
    assert parse_retry_after(value) == expected


def test_retry_after_http_date():
    now = 1_800_000_000.0
    assert parse_retry_after(formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30, abs=1)
    assert parse_retry_after(formatdate(now - 30, usegmt=True), now=now) == 0.0


# --- throttle -----------------------------------------------------------------------------------


def test_rate_limit_paces_grants():
    async def scenario():
        throttle = Throttle(20.0, 100)
        started = time.perf_counter()
        for _ in range(26):  # 20 fit the first second's bucket; 6 more need ~0.3 s
            async with throttle.slot():
                pass
        return time.perf_counter() - started

    elapsed = asyncio.run(scenario())
    assert 0.2 <= elapsed < 1.0


def test_sub_one_rate_spaces_requests():
    limiter = rate_limiter(0.5)
    assert limiter.max_rate == 1 and limiter.time_period == 2.0


def test_concurrency_cap_and_distinct_slots():
    in_flight, peak, slots_seen = 0, 0, set()

    async def one(throttle):
        nonlocal in_flight, peak
        async with throttle.slot() as grant:
            in_flight += 1
            peak = max(peak, in_flight)
            slots_seen.add(grant.slot)
            await asyncio.sleep(0.01)
            in_flight -= 1
            return grant.waited_s

    async def scenario():
        throttle = Throttle(10_000, 3)
        return await asyncio.gather(*(one(throttle) for _ in range(12)))

    waits = asyncio.run(scenario())
    assert peak == 3 and slots_seen == {0, 1, 2}
    assert max(waits) >= 0.02  # later grants waited for a free slot, and that is measured


def test_shared_limiter_spans_lanes():
    async def scenario():
        limiter = rate_limiter(10.0)
        a, b = Throttle(10.0, 5, limiter=limiter), Throttle(10.0, 5, limiter=limiter)
        started = time.perf_counter()
        for throttle in [a, b] * 7:  # 14 grants from one 10/s budget
            async with throttle.slot():
                pass
        return time.perf_counter() - started

    assert asyncio.run(scenario()) >= 0.3


@pytest.mark.parametrize("bad", [0, -1])
def test_throttle_rejects_nonsense(bad):
    with pytest.raises(ValueError):
        Throttle(1.0, bad)
    with pytest.raises(ValueError):
        rate_limiter(bad)


# --- event sink -------------------------------------------------------------------------------


def test_event_sink_group_commits_concurrent_appends(tmp_path, monkeypatch):
    log = EventLog(tmp_path / "log")
    producer = producer_for({"test": "sink"})
    events = [
        make_event(
            RunFinished(terminal_events=i, completed=i, failed=0, duration_s=0.0),
            run_id="r",
            producer=producer,
        )
        for i in range(200)
    ]
    with log.writer() as writer:
        calls = []
        real_append = writer.append
        monkeypatch.setattr(
            writer, "append", lambda batch: calls.append(len(batch)) or real_append(batch)
        )

        async def scenario():
            sink = EventSink(writer)
            await asyncio.gather(*(sink.append(event) for event in events))
            await sink.drain()

        asyncio.run(scenario())
    assert sum(calls) == 200 and len(calls) < 20  # batched, not one fsync per event
    stored = [event for _raw, event in log.read()]
    assert sorted(e["event_id"] for e in stored) == sorted(e.event_id for e in events)


def test_event_sink_reports_write_failures_to_every_producer(tmp_path, monkeypatch):
    log = EventLog(tmp_path / "log")
    event = make_event(
        RunFinished(terminal_events=1, completed=1, failed=0, duration_s=0.0),
        run_id="r",
        producer=producer_for({}),
    )
    with log.writer() as writer:

        def broken(batch):
            raise OSError("disk full")

        monkeypatch.setattr(writer, "append", broken)

        async def scenario():
            sink = EventSink(writer)
            return await asyncio.gather(
                sink.append(event), sink.append(event), return_exceptions=True
            )

        results = asyncio.run(scenario())
    assert all(isinstance(r, OSError) for r in results)
