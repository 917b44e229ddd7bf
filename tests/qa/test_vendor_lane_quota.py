"""A Tavily key out of credits (HTTP 432/433) stops the lane after one call, as a labelled
terminal failure, instead of logging hundreds of landed non-answers that score as misses."""

from __future__ import annotations

import pytest

from collectors.qa.lane_registry import build_lanes
from collectors.qa.runner import run_qa
from tests.fakes.fake_server import FakeVendorServer, Fault
from tests.qa.conftest import events
from tests.qa.test_runner import offline_roles

QUOTA_BODY = b'{"detail": {"error": "This request exceeds your plan\'s set usage limit."}}'


@pytest.mark.parametrize("status", [432, 433])
def test_tavily_quota_aborts_the_lane_and_scores_nothing(event_log, simpleqa, status):
    with FakeVendorServer() as fake:
        fake.set_fault("tavily", Fault.status(status, body=QUOTA_BODY))
        lanes = build_lanes(
            ["tavily_search_basic"],
            environ={"TAVILY_API_KEY": "tvly-test-key"},
            base_urls=fake.base_urls(),
            # unpaced: the bound below must come from the abort itself, not from the vendor's
            # 1 request/s (before the abort was set at the refusal, 10-16 of 20 calls went out)
            rate_per_s=1000.0,
        )
        summary = run_qa(event_log, simpleqa, lanes, limit=20, **offline_roles())
        calls = fake.requests_for("tavily")
    assert "tavily_search_basic" in summary.aborted_lanes
    message = summary.aborted_lanes["tavily_search_basic"]
    assert f"HTTP {status}" in message and "limit exceeded" in message
    assert summary.status.startswith("incomplete")
    failed = [e["payload"] for e in events(event_log, "provider_call_failed")]
    assert failed and all(p["error_class"] == "auth" for p in failed)
    assert all("limit exceeded" in p["error_message"] for p in failed)
    # Stopped, not 20 landed rejections: only the calls already in flight (one per lane slot).
    (lane,) = lanes
    assert len(calls) <= lane.concurrency and len(failed) == len(calls)
    assert not events(event_log, "answer_synthesized")
