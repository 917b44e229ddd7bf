"""The shared HTTP layer against the loopback fake server, one fault at a time. Every call ends
in exactly one payload that validates against its model."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest

from collectors.http import ErrorClass, LaneAborted
from tests.fakes import Fault
from tests.providers.conftest import assert_valid_payload

LANE = "exa_search_auto"


def search_once(run, search_with, lane=LANE, **overrides):
    """One search on a fresh client; returns (outcome, seconds taken)."""

    async def scenario():
        async with search_with([lane], **overrides) as search:
            started = time.perf_counter()
            result = await search.search(lane, "who wrote hamlet", item_id="item-1")
            return result, time.perf_counter() - started

    result, elapsed = run(scenario())
    assert_valid_payload(result.outcome.payload)
    return result.outcome, elapsed


def assert_timings_consistent(outcome):
    t = outcome.timings
    assert t.queue_wait_ms >= 0
    assert t.round_trip_ms is not None and t.round_trip_ms <= t.whole_call_ms
    assert t.queue_wait_ms <= t.whole_call_ms


def test_plain_success_is_one_completed_payload(fake, run, search_with):
    outcome, _ = search_once(run, search_with)
    assert outcome.completed and outcome.status_code == 200 and outcome.http_attempts == 1
    assert outcome.error_class is None and outcome.landed
    assert_timings_consistent(outcome)
    assert len(fake.requests_for("exa")) == 1


@pytest.mark.parametrize(
    "faults",
    [
        [Fault.status(503), Fault.status(502)],
        [Fault.status(529)],
        [Fault.status(500), Fault.status(429)],
        [Fault.status(408), Fault.status(425)],
        [Fault.reset()],
        [Fault.reset(mid_body=True)],
        [Fault.truncated_json()],
    ],
    ids=["5xx-twice", "529", "500-then-429", "408-425", "reset", "reset-mid-body", "truncated"],
)
def test_retryable_faults_are_retried_then_succeed(fake, run, search_with, faults):
    fake.add_faults("exa", *faults)
    outcome, _ = search_once(run, search_with)
    assert outcome.completed, outcome.payload
    assert outcome.http_attempts == len(faults) + 1
    assert len(fake.requests_for("exa")) == len(faults) + 1
    assert_timings_consistent(outcome)


@pytest.mark.parametrize(
    ("fault", "error_class", "status"),
    [
        (Fault.status(503), ErrorClass.HTTP_STATUS, 503),
        (Fault.status(429), ErrorClass.RATE_LIMITED, 429),
        (Fault.reset(), ErrorClass.CONNECTION, None),
        (Fault.reset(mid_body=True), ErrorClass.TRUNCATED_BODY, 200),
        (Fault.truncated_json(), ErrorClass.TRUNCATED_BODY, 200),
    ],
    ids=["503", "429", "reset", "reset-mid-body", "truncated"],
)
def test_persistent_retryable_faults_fail_after_bounded_attempts(
    fake, run, search_with, fault, error_class, status
):
    fake.set_fault("exa", fault)
    outcome, _ = search_once(run, search_with)
    payload = outcome.payload
    assert not outcome.completed
    assert payload.error_class == error_class and payload.status_code == status
    assert payload.landed is False  # never a usable answer: counted as `failed`
    assert payload.http_attempts == 3 == len(fake.requests_for("exa"))
    assert "gave up after 3 HTTP attempt(s)" in payload.error_message
    assert_timings_consistent(outcome)


def test_retry_after_seconds_is_honoured(fake, run, search_with):
    fake.add_faults("exa", Fault.status(429, retry_after="1"))
    outcome, elapsed = search_once(run, search_with)
    assert outcome.completed and outcome.http_attempts == 2
    assert 0.95 <= elapsed < 3.0
    # The wait is backoff, not provider time: the last round trip stays small.
    assert outcome.timings.round_trip_ms < 500 and outcome.timings.whole_call_ms >= 950


def test_retry_after_http_date_is_honoured(fake, run, search_with):
    fake.add_faults("exa", Fault.status(503, retry_after=formatdate(time.time() + 2, usegmt=True)))
    outcome, elapsed = search_once(run, search_with)
    assert outcome.completed and outcome.http_attempts == 2
    assert 0.9 <= elapsed < 3.5  # HTTP-dates have one-second resolution


def test_retry_after_beyond_the_cap_ends_the_call_at_once(fake, run, search_with):
    fake.set_fault("exa", Fault.status(429, retry_after="120"))
    outcome, elapsed = search_once(run, search_with)
    assert outcome.payload.error_class == ErrorClass.RATE_LIMITED
    assert outcome.http_attempts == 1 and elapsed < 1.0
    assert "Retry-After 120s exceeds the cap" in outcome.payload.error_message


def test_timeout_fails_with_error_class_timeout(fake, run, search_with):
    fake.set_fault("exa", Fault.slow(1.0))
    outcome, elapsed = search_once(
        run, search_with, policy_changes={"attempt_timeout_s": 0.2, "max_attempts": 2}
    )
    payload = outcome.payload
    assert payload.error_class == ErrorClass.TIMEOUT and payload.landed is False
    assert payload.status_code is None and payload.http_attempts == 2
    assert elapsed < 1.5
    # round trip = the last attempt, cut at the deadline
    assert 150 <= payload.timings.round_trip_ms < 600


def test_httpx_read_timeout_also_counts_as_timeout(fake, run, search_with):
    fake.set_fault("exa", Fault.slow(1.0))
    outcome, _ = search_once(
        run, search_with, policy_changes={"read_timeout_s": 0.2, "max_attempts": 1}
    )
    assert outcome.payload.error_class == ErrorClass.TIMEOUT


def test_slow_first_attempt_then_fast_one_reports_the_last_round_trip(fake, run, search_with):
    fake.add_faults("exa", Fault.slow(1.0))
    outcome, _ = search_once(run, search_with, policy_changes={"attempt_timeout_s": 0.3})
    assert outcome.completed and outcome.http_attempts == 2
    assert outcome.timings.round_trip_ms < 250 <= outcome.timings.whole_call_ms


def test_malformed_json_is_retried_once_then_fails(fake, run, search_with):
    fake.set_fault("exa", Fault.malformed_json())
    outcome, _ = search_once(run, search_with)
    payload = outcome.payload
    assert payload.error_class == ErrorClass.MALFORMED_BODY and payload.landed is False
    assert payload.http_attempts == 2  # one retry, not the whole budget
    assert payload.status_code == 200 and payload.raw_body.startswith("<html>")


def test_malformed_json_once_then_good_body_completes(fake, run, search_with):
    fake.add_faults("exa", Fault.malformed_json(b'{"results": [{"url": '))
    outcome, _ = search_once(run, search_with)
    assert outcome.completed and outcome.http_attempts == 2


@pytest.mark.parametrize("declare_length", [True, False], ids=["content-length", "chunked"])
def test_huge_body_is_cut_off_and_fails_without_retry(fake, run, search_with, declare_length):
    fake.set_fault("exa", Fault.huge_body(5_000_000, declare_length=declare_length))
    outcome, elapsed = search_once(run, search_with, policy_changes={"max_body_bytes": 200_000})
    payload = outcome.payload
    assert payload.error_class == ErrorClass.BODY_TOO_LARGE and payload.raw_body is None
    assert payload.http_attempts == 1 and payload.status_code == 200
    assert "max_body_bytes=200000" in payload.error_message
    assert elapsed < 2.0


@pytest.mark.parametrize("status", [400, 422])
def test_rejections_are_landed_non_answers(fake, run, search_with, status):
    fake.set_fault("exa", Fault.status(status, body=b'{"requestId": "r-1", "error": "bad query"}'))
    outcome, _ = search_once(run, search_with)
    payload = outcome.payload
    assert payload.event_type == "provider_call_failed"
    assert payload.error_class == ErrorClass.REJECTED and payload.landed is True
    assert payload.status_code == status and payload.http_attempts == 1
    assert '"bad query"' in payload.raw_body


def test_other_client_errors_are_landed_and_not_retried(fake, run, search_with):
    fake.set_fault("exa", Fault.status(404))
    outcome, _ = search_once(run, search_with)
    assert outcome.payload.error_class == ErrorClass.CLIENT_ERROR
    assert outcome.payload.landed is True and outcome.http_attempts == 1


def test_409_is_retried_only_where_the_lane_says_so(fake, run, search_with):
    fake.add_faults("nimble", Fault.status(409))
    nimble, _ = search_once(run, search_with, lane="nimble_search")
    assert nimble.completed and nimble.http_attempts == 2

    fake.add_faults("exa", Fault.status(409))
    exa, _ = search_once(run, search_with)
    assert exa.payload.error_class == ErrorClass.CLIENT_ERROR and exa.http_attempts == 1


@pytest.mark.parametrize("status", [401, 402, 403])
def test_auth_billing_permission_abort_the_lane_with_a_payload(fake, run, search_with, status):
    fake.set_fault("exa", Fault.status(status))

    async def scenario():
        async with search_with([LANE]) as search:
            await search.search(LANE, "q", item_id="item-9", attempt=2)

    with pytest.raises(LaneAborted) as aborted:
        run(scenario())
    payload = aborted.value.payload
    assert_valid_payload(payload)
    assert payload.error_class == ErrorClass.AUTH and payload.landed is True
    assert payload.status_code == status and payload.http_attempts == 1
    assert payload.item_id == "item-9" and payload.attempt == 2
    assert f"HTTP {status}" in str(aborted.value) and LANE in str(aborted.value)
    assert len(fake.requests_for("exa")) == 1


def test_wrong_key_from_the_server_is_a_lane_abort(fake, run, search_with):
    fake.reset(keys={"exa": "the-only-valid-key"})

    async def scenario():
        async with search_with([LANE]) as search:
            await search.search(LANE, "q", item_id="i")

    with pytest.raises(LaneAborted):
        run(scenario())


def test_one_failed_item_does_not_disturb_concurrent_calls(fake, run, search_with):
    fake.add_faults("exa", Fault.status(503), Fault.reset(), Fault.malformed_json())

    async def scenario():
        import asyncio

        async with search_with([LANE], concurrency=4) as search:
            return await asyncio.gather(
                *(search.search(LANE, f"q{i}", item_id=f"i{i}") for i in range(12))
            )

    results = run(scenario())
    assert all(r.outcome.completed for r in results)
    assert sum(r.outcome.http_attempts for r in results) == 15
    assert {r.outcome.payload.item_id for r in results} == {f"i{i}" for i in range(12)}


# Tavily's own quota statuses (tavily-python 0.8.5 `_handle_error_response` raises ForbiddenError
# for 403, 432 and 433 alike; its error text is at `detail.error`).
TAVILY_QUOTA = {
    432: b'{"detail": {"error": "This request exceeds your plan\'s set usage limit."}}',
    433: b'{"detail": {"error": "This request exceeds the pay-as-you-go limit."}}',
}


@pytest.mark.parametrize("status", sorted(TAVILY_QUOTA))
@pytest.mark.parametrize("lane", ["tavily_search_basic", "tavily_search_fast"])
def test_tavily_quota_statuses_abort_the_lane(fake, run, search_with, status, lane):
    fake.set_fault("tavily", Fault.status(status, body=TAVILY_QUOTA[status]))

    async def scenario():
        async with search_with([lane]) as search:
            await search.search(lane, "q", item_id="item-3")

    with pytest.raises(LaneAborted) as aborted:
        run(scenario())
    payload = aborted.value.payload
    assert_valid_payload(payload)
    assert payload.error_class == ErrorClass.AUTH and payload.status_code == status
    assert payload.http_attempts == 1  # not retried: every further call would fail alike
    assert "limit exceeded" in payload.error_message and "Tavily" in payload.error_message
    assert "limit exceeded" in str(aborted.value) and lane in str(aborted.value)
    assert "usage limit" in payload.raw_body or "pay-as-you-go" in payload.raw_body


def test_432_is_only_a_quota_status_on_tavily(fake, run, search_with):
    fake.set_fault("exa", Fault.status(432))
    outcome, _ = search_once(run, search_with)
    assert outcome.payload.error_class == ErrorClass.CLIENT_ERROR


FIRECRAWL_FAILED = b'{"success": false, "error": "Search timed out", "code": "SEARCH_TIMEOUT"}'


def test_firecrawl_200_with_success_false_is_a_failure(fake, run, search_with):
    fake.set_fault("firecrawl", Fault.status(200, body=FIRECRAWL_FAILED))
    outcome, _ = search_once(run, search_with, lane="firecrawl_search")
    payload = outcome.payload
    assert payload.event_type == "provider_call_failed"
    assert payload.error_class == ErrorClass.VENDOR_FAILED and payload.landed is False
    assert payload.status_code == 200 and payload.http_attempts == 5  # retried as a 5xx is
    assert "Search timed out (SEARCH_TIMEOUT)" in payload.error_message
    assert payload.raw_body == FIRECRAWL_FAILED.decode()


def test_firecrawl_success_false_once_then_results_completes(fake, run, search_with):
    fake.add_faults("firecrawl", Fault.status(200, body=FIRECRAWL_FAILED))
    outcome, _ = search_once(run, search_with, lane="firecrawl_search")
    assert outcome.completed and outcome.http_attempts == 2


@pytest.mark.parametrize("body", [b'{"data": {"web": []}}', b'{"success": false}', b"[]"])
def test_firecrawl_body_without_success_true_is_a_failure_as_the_sdk_reads_it(
    fake, run, search_with, body
):
    # firecrawl-py v2 `search`: `if not response_data.get("success"): handle_response_error`.
    fake.set_fault("firecrawl", Fault.status(200, body=body))
    outcome, _ = search_once(run, search_with, lane="firecrawl_search")
    assert outcome.payload.error_class == ErrorClass.VENDOR_FAILED
