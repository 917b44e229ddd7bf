"""Research preflight against the loopback research fake: every lane's zero-cost probe, what an
"ok" rests on, retries of transient faults, refused keys, unexpected answers, and the lanes
that cannot be checked without starting a paid run."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from collectors.draco.runner import DracoPreflightFailed, preflight_lanes
from collectors.draco.systems import LANES, make_lane
from collectors.draco.systems.driver import NOT_CHECKED, PREFLIGHT_ATTEMPTS, DrivenLane
from collectors.http import CallPolicy, ProviderRequest
from collectors.products.research import PREFLIGHT_RUN_ID, Report, RunState, VendorApi
from tests.draco.research_support import CANARY_KEYS, assert_no_keys
from tests.fakes.research_fake import FakeResearchServer, Fault

FAST = {"backoff_base_s": 0.001, "backoff_cap_s": 0.005, "attempt_timeout_s": 2.0}

# A 404 for a run id that cannot exist proves the endpoint answers and the key was not refused,
# not that the key is valid: the detail says exactly that, never "key accepted".
NOT_PROVEN_RUN = (
    "reachable, key not refused (HTTP 404 for an unknown run id; key validity not proven)"
)
# lane -> (the probe's method and path on the fake, what the ok detail must say)
EXPECTED = {
    "nimble_agent_high": ("/nimble/v2/agents", "key accepted (agents list → HTTP 200)"),
    "exa_agent_low": ("/exa/agent/runs", "key accepted (agent runs list → HTTP 200)"),
    "exa_deep_reasoning": ("/exa/agent/runs", "/search not called"),
    "parallel_task_core": (
        f"/parallel/v1/tasks/runs/{PREFLIGHT_RUN_ID}",
        NOT_PROVEN_RUN,
    ),
    "openai_gpt55_web": ("/openai/v1/models/gpt-5.5", "key accepted (model gpt-5.5 → HTTP 200)"),
    "openai_o3_deep_research": ("/openai/v1/models/o3-deep-research", "HTTP 200"),
    "gemini_deep_research": ("/gemini/v1/models", "key accepted (models list → HTTP 200)"),
    "valyu_heavy": ("/valyu/v1/deepresearch/list", "key accepted (tasks list → HTTP 200)"),
    "youcom_research_exhaustive": (
        f"/youcom/v1/research/{PREFLIGHT_RUN_ID}",
        "reachable, key not refused (HTTP 404 for an unknown task id; key validity not proven)",
    ),
    "tavily_research_pro": (
        f"/tavily/research/{PREFLIGHT_RUN_ID}",
        NOT_PROVEN_RUN,
    ),
    "perplexity_sonar_deep_research": (
        "/perplexity/v1/models",
        "key accepted (models list → HTTP 200)",
    ),
}


@pytest.fixture(scope="module")
def _server():
    with FakeResearchServer() as server:
        yield server


@pytest.fixture
def fake(_server, monkeypatch):
    for name, value in CANARY_KEYS.items():
        monkeypatch.setenv(name, value)
    _server.reset(keys={})
    yield _server
    _server.reset(keys={})


def preflight(fake, lane_name: str, **options) -> tuple[str, str]:
    async def go():
        lane = make_lane(lane_name, base_urls=fake.base_urls(), policy_changes=FAST, **options)
        async with lane:
            return await lane.preflight()

    return asyncio.run(go())


def test_every_vendor_has_a_probe_case():
    providers = {LANES[lane].provider for lane in EXPECTED}
    assert providers == {spec.provider for spec in LANES.values() if spec.api is not None}


@pytest.mark.parametrize("lane", sorted(EXPECTED))
def test_each_lane_probe_says_what_the_ok_rests_on(fake, lane):
    path, detail = EXPECTED[lane]
    status, said = preflight(fake, lane)
    assert status == "ok"
    assert detail in said
    if "404" in said:
        assert "key accepted" not in said
    provider = LANES[lane].provider
    sent = fake.requests_for(provider)
    assert [(r.method, r.path) for r in sent] == [("GET", path)]  # one GET, nothing submitted
    assert_no_keys(said)


def test_nimble_probe_makes_up_no_run_or_agent_id(fake):
    status, _detail = preflight(fake, "nimble_agent_xhigh")
    assert status == "ok"
    (sent,) = fake.requests_for("nimble")
    assert PREFLIGHT_RUN_ID not in sent.path and "/runs" not in sent.path


def test_one_transient_fault_is_retried_not_a_failed_preflight(fake):
    fake.add_faults("gemini", Fault.status(503))
    status, detail = preflight(fake, "gemini_deep_research_max")
    assert (status, detail) == ("ok", "key accepted (models list → HTTP 200)")
    assert len(fake.requests_for("gemini")) == 2


def test_a_fault_that_outlives_the_retries_is_unreachable(fake):
    fake.set_fault("tavily", Fault.status(503))
    status, detail = preflight(fake, "tavily_research_mini")
    assert status == "unreachable" and "http_status" in detail
    assert len(fake.requests_for("tavily")) == PREFLIGHT_ATTEMPTS


def test_a_refused_key_is_auth_failed_without_retries(fake):
    fake.reset(keys={"valyu": "the-right-key"})
    status, detail = preflight(fake, "valyu_fast")
    assert status == "auth_failed" and "401" in detail
    assert len(fake.requests_for("valyu")) == 1


def test_a_404_where_a_list_was_expected_is_unexpected_not_ok(fake):
    # A wrong base URL or path answers 404; only an unknown-run probe may read that as ok.
    fake.add_faults("openai", Fault.status(404))
    status, detail = preflight(fake, "openai_o4mini_deep_research")
    assert status == "unexpected"
    assert "model o4-mini-deep-research → HTTP 404, expected HTTP [200]" in detail


def test_an_unknown_run_probe_answered_200_is_unexpected(fake):
    fake.add_faults("parallel", Fault("status", code=200, body=b'{"run_id": "x"}'))
    status, detail = preflight(fake, "parallel_task_lite")
    assert status == "unexpected" and "expected HTTP [404]" in detail


def test_preflight_lanes_survives_a_transient_fault_and_refuses_a_bad_key(fake):
    fake.add_faults("exa", Fault.status(502))
    lanes = [
        make_lane("exa_agent_high", base_urls=fake.base_urls(), policy_changes=FAST),
        make_lane("perplexity_sonar_deep_research", base_urls=fake.base_urls()),
    ]
    results = preflight_lanes(lanes)
    assert [status for _lane, status, _detail in results] == ["ok", "ok"]
    fake.reset(keys={"perplexity": "the-right-key"})
    with pytest.raises(DracoPreflightFailed, match="perplexity_sonar_deep_research: auth_failed"):
        preflight_lanes([make_lane("perplexity_sonar_deep_research", base_urls=fake.base_urls())])


@dataclass(frozen=True)
class _PaidOnlyApi(VendorApi):
    """A synchronous vendor with no zero-cost endpoint (the default probe: none)."""

    provider = "paid-only"
    key_env = "PAID_ONLY_KEY"
    base_url = "http://127.0.0.1:9"
    version = "paid_only@1"

    def settings(self):
        return {}

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        raise AssertionError("preflight must not start a paid run")

    def read_submit(self, document) -> RunState:
        return RunState(phase="completed", report=Report(text=""))


def test_a_vendor_without_a_free_check_is_reported_not_checked():
    policy = CallPolicy(max_attempts=1)
    lane = DrivenLane(
        lane="paid-only",
        api=_PaidOnlyApi(),
        base_url="http://127.0.0.1:9",
        submit_policy=policy,
        poll_policy=policy,
        schedule=None,
        rate_per_s=10.0,
        concurrency=1,
        environ={"PAID_ONLY_KEY": "k"},
    )

    async def go():
        async with lane:
            return await lane.preflight()

    assert asyncio.run(go()) == ("skipped", NOT_CHECKED)
    assert NOT_CHECKED == "not checked: any call starts a paid run"


def test_an_unexpected_answer_does_not_print_the_vendors_body(fake):
    # A vendor error may echo the key it was sent; the preflight detail is printed.
    echo = f'{{"error": "Incorrect API key provided: {CANARY_KEYS["GEMINI_API_KEY"]}"}}'
    fake.add_faults("gemini", Fault("status", code=404, body=echo.encode()))
    status, detail = preflight(fake, "gemini_deep_research")
    assert status == "unexpected"
    assert_no_keys(detail)
