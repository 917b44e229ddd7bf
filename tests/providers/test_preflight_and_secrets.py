"""Preflight per lane, and the canary check: planted keys never reach a payload, an event, an
exception, a log line or the log files, while the fake server did receive them."""

from __future__ import annotations

import socket

import pytest

from collectors.http import LaneAborted
from collectors.search import LANES, SearchClient, chunks_payload
from tests.fakes import Fault
from tests.providers.conftest import CANARY_KEYS, FAST_POLICY, assert_valid_payload
from warehouse.events import make_event
from warehouse.log import EventLog
from warehouse.provenance import producer_for


def preflight(run, search_with, lane, **overrides):
    async def scenario():
        async with search_with([lane], **overrides) as search:
            return await search.preflight(lane)

    return run(scenario())


@pytest.mark.parametrize("lane", sorted(LANES))
def test_preflight_ok_spends_one_single_result_call(fake, run, search_with, lane):
    report = preflight(run, search_with, lane)
    assert report.ok, report
    assert report.detail == "HTTP 200, 1 result(s)"
    payload = report.outcome.payload
    assert_valid_payload(payload)
    assert payload.stage == "preflight" and payload.item_id == "preflight"
    provider = LANES[lane].provider
    searches = [r for r in fake.requests_for(provider) if "healthcheck" not in r.path]
    assert len(searches) == 1


def test_preflight_reports_auth_failure(fake, run, search_with):
    fake.reset(keys={"tavily": "another-key"})
    report = preflight(run, search_with, "tavily_search_basic")
    assert report.status == "auth_failed" and "HTTP 401" in report.detail
    assert report.outcome.payload.error_class == "auth"


def test_preflight_does_not_retry(fake, run, search_with):
    fake.set_fault("brave", Fault.status(503))
    report = preflight(run, search_with, "brave_search")
    assert report.status == "unreachable" and report.outcome.http_attempts == 1
    assert len(fake.requests_for("brave")) == 1


def test_preflight_reports_a_rejected_request(fake, run, search_with):
    fake.set_fault("firecrawl", Fault.status(422))
    assert preflight(run, search_with, "firecrawl_search").status == "rejected"


def test_preflight_reports_a_200_marked_failed_as_rejected(fake, run, search_with):
    body = b'{"success": false, "error": "Insufficient credits", "code": "PAYMENT_REQUIRED"}'
    fake.set_fault("firecrawl", Fault.status(200, body=body))
    report = preflight(run, search_with, "firecrawl_search")
    assert report.status == "rejected"
    # Printed: our error class, the HTTP status, the vendor's code; never the vendor's prose
    # (an error string may quote the request, the key included).
    assert report.detail == "vendor_failed (HTTP 200, vendor code PAYMENT_REQUIRED)"


@pytest.mark.parametrize("status", [200, 422])
def test_preflight_never_prints_the_vendors_error_text(fake, run, search_with, status):
    key = CANARY_KEYS[LANES["firecrawl_search"].key_env]
    body = f'{{"success": false, "error": "bad key {key} for query", "code": "BAD_REQUEST"}}'
    fake.set_fault("firecrawl", Fault.status(status, body=body.encode()))
    report = preflight(run, search_with, "firecrawl_search")
    assert report.status == "rejected"
    assert "bad key" not in report.detail and key not in report.detail
    assert f"HTTP {status}" in report.detail and "BAD_REQUEST" in report.detail


def test_preflight_reports_an_unreachable_host(run, search_with):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    report = preflight(
        run, search_with, "exa_search_auto", base_urls={"exa": f"http://127.0.0.1:{port}"}
    )
    assert report.status == "unreachable" and "connection" in report.detail


def test_nimble_preflight_checks_health_first(fake, run, search_with):
    fake.set_fault("/nimble/v2/healthcheck", Fault.status(500))
    report = preflight(run, search_with, "nimble_search")
    assert report.status == "unreachable" and report.detail == "healthcheck: HTTP 500"
    assert report.outcome is None  # nothing billed
    assert [r.path for r in fake.requests_for("nimble")] == ["/nimble/v2/healthcheck"]


def test_preflight_without_a_key_calls_nothing(fake, run, monkeypatch):
    async def scenario():
        async with SearchClient(["exa_search_auto"], environ={}) as search:
            return await search.preflight("exa_search_auto")

    report = run(scenario())
    assert report.status == "missing_key" and "EXA_API_KEY" in report.detail
    assert fake.requests == []


# --- canaries ----------------------------------------------------------------------------------

FAULTS_TO_CROSS = [
    None,
    Fault.status(503),
    Fault.status(429, retry_after="0"),
    Fault.status(400),
    Fault.reset(),
    Fault.truncated_json(),
    Fault.malformed_json(),
    Fault.slow(0.5),
]


def test_canary_keys_never_leave_the_process_except_to_the_vendor(
    fake, run, search_with, canary_env, debug_logs, tmp_path
):
    # A vendor that echoes the key back, in its body and in a JSON field name.
    exa_key = CANARY_KEYS["EXA_API_KEY"]
    echo = f'{{"results": [{{"url": "https://e.org", "title": "{exa_key}", "summary": "x"}}], "{exa_key}": 1}}'
    payloads, errors = [], []

    async def scenario():
        async with search_with(
            policy_changes={**FAST_POLICY, "attempt_timeout_s": 0.2, "max_attempts": 2}
        ) as search:
            for lane, spec in LANES.items():
                for n, fault in enumerate([*FAULTS_TO_CROSS, Fault.status(401)]):
                    fake.add_faults(spec.provider, fault)
                    try:
                        result = await search.search(lane, "q", item_id=f"{lane}-{n}")
                        payloads.append(result.outcome.payload)
                        if result.outcome.completed:
                            payloads.append(chunks_payload(result, "src"))
                    except LaneAborted as aborted:
                        errors.append(repr(aborted) + str(aborted))
                        payloads.append(aborted.payload)
                    fake.clear_faults()
                payloads.append((await search.preflight(lane)).outcome.payload)
            fake.add_faults("exa", Fault.status(200, body=echo.encode()))
            echoed = await search.search("exa_search_auto", "q", item_id="echo")
            payloads.append(echoed.outcome.payload)
            payloads.append(chunks_payload(echoed, "src"))

    run(scenario())

    # the vendor did get each key, in the documented header
    for spec in LANES.values():
        received = "\n".join(r.raw for r in fake.requests_for(spec.provider))
        assert CANARY_KEYS[spec.key_env] in received

    log = EventLog(tmp_path / "log")
    producer = producer_for({"test": "canary"})
    with log.writer() as writer:
        writer.append(make_event(p, run_id="run", producer=producer) for p in payloads)
    assert len(payloads) > 9 * 9
    assert echoed_title_was_redacted(payloads)

    on_disk = "\n".join(
        path.read_text() for path in (tmp_path / "log").rglob("*") if path.is_file()
    )
    texts = {
        "payloads": "\n".join(p.model_dump_json() for p in payloads),
        "exceptions": "\n".join(errors),
        "logs": debug_logs.text + "\n".join(str(r.args) for r in debug_logs.records),
        "log files": on_disk,
    }
    for where, text in texts.items():
        for name, key in CANARY_KEYS.items():
            assert key not in text, f"{name} leaked into {where}"
            assert "sk-canary" not in text, f"a canary fragment leaked into {where}"


def echoed_title_was_redacted(payloads) -> bool:
    chunks = [p for p in payloads if p.event_type == "chunks_normalized" and p.item_id == "echo"]
    return chunks and chunks[0].chunks[0].title == "[REDACTED]"
