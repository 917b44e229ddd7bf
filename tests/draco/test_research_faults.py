"""Research lanes against the loopback research fake: async state machines over real HTTP,
and every fault the driver must survive or report (never drop, never disguise)."""

from __future__ import annotations

import asyncio
import json

import pytest

from collectors.draco.systems import make_lane
from collectors.http import LaneAborted
from tests.draco.research_support import (
    CANARY_KEYS,
    Recorder,
    assert_no_keys,
    assert_terminal_valid,
    draco_task,
    instruction_for,
)
from tests.fakes.research_fake import (
    DEFAULT_CITATIONS,
    DEFAULT_REPORT,
    FakeResearchServer,
    Fault,
)
from warehouse.events import (
    ProviderCallCompleted,
    ProviderCallFailed,
    ResearchCompleted,
    ResearchFailed,
)

FAST = {
    "backoff_base_s": 0.001,
    "backoff_cap_s": 0.005,
    "connect_timeout_s": 2.0,
    "read_timeout_s": 2.0,
    "attempt_timeout_s": 2.0,
}
POLL = 0.01
RATE = (
    1000.0  # a loopback fake needs no vendor pacing (the default, 2 requests/s, adds 0.5 s a poll)
)


@pytest.fixture(scope="module")
def task(shared_data):
    return draco_task(shared_data)


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


def research(fake, lane_name, task, **options):
    recorder = Recorder()
    options = {"poll_interval_s": POLL, "policy_changes": FAST, "rate_per_s": RATE, **options}

    async def go():
        lane = make_lane(lane_name, base_urls=fake.base_urls(), **options)
        async with lane:
            return await lane.research(task, instruction_for(task), attempt=1, emit=recorder)

    result = asyncio.run(go())
    assert_terminal_valid(result)
    assert result.source_event_ids == recorder.ids
    assert_no_keys(recorder.dump() + json.dumps(result.model_dump(mode="json")))
    return result, recorder


ASYNC_LANES = [
    (
        "nimble_agent_low",
        ["research:submit", "research:poll:1", "research:poll:2", "research:result"],
    ),
    ("exa_agent_low", ["research:submit", "research:poll:1", "research:poll:2"]),
    (
        "parallel_task_core",
        ["research:submit", "research:poll:1", "research:poll:2", "research:result"],
    ),
    ("openai_o4mini_deep_research", ["research:submit", "research:poll:1", "research:poll:2"]),
    ("gemini_deep_research", ["research:submit", "research:poll:1", "research:poll:2"]),
    ("valyu_standard", ["research:submit", "research:poll:1", "research:poll:2"]),
    ("tavily_research_auto", ["research:submit", "research:poll:1", "research:poll:2"]),
    ("perplexity_sonar_deep_research", ["research:submit", "research:poll:1", "research:poll:2"]),
]
SYNC_LANES = [
    "exa_deep_reasoning",
    "openai_gpt55pro_web",
    "youcom_research_exhaustive",
]


@pytest.mark.parametrize(("lane", "stages"), ASYNC_LANES, ids=[a for a, _ in ASYNC_LANES])
def test_async_runs_complete_over_real_http(fake, task, lane, stages):
    result, recorder = research(fake, lane, task)
    assert isinstance(result, ResearchCompleted)
    assert result.raw_output == DEFAULT_REPORT
    assert [(c.url, c.title) for c in result.raw_citations] == [
        (c["url"], c["title"]) for c in DEFAULT_CITATIONS
    ]
    assert recorder.stages == stages
    assert result.polls == 2 and result.poll_interval_s == POLL
    assert result.vendor_run_id
    # The key went out (and only in the vendor's auth header), and never came back in a payload.
    sent = fake.requests_for(recorder.payloads[0].provider)
    assert all(any(key in r.raw for key in CANARY_KEYS.values()) for r in sent)


@pytest.mark.parametrize("lane", SYNC_LANES)
def test_synchronous_lanes_complete_in_one_call(fake, task, lane):
    result, recorder = research(fake, lane, task)
    assert isinstance(result, ResearchCompleted)
    assert result.raw_output == DEFAULT_REPORT
    assert recorder.stages == ["research:submit"] and result.polls == 0
    assert result.poll_interval_s is None


def test_429_with_retry_after_on_submit_is_retried_in_the_same_call(fake, task):
    fake.add_faults("parallel", Fault.status(429, retry_after="0"), Fault.status(503))
    result, recorder = research(fake, "parallel_task_base", task)
    assert isinstance(result, ResearchCompleted)
    submit = recorder.payloads[0]
    assert submit.stage == "research:submit" and submit.http_attempts == 3
    submits = [r for r in fake.requests_for("parallel") if r.method == "POST"]
    assert len(submits) == 3


def test_submit_429_that_outlives_retries_fails_the_attempt(fake, task):
    fake.set_fault("tavily", Fault.status(429, retry_after="0"))
    result, recorder = research(
        fake, "tavily_research_mini", task, policy_changes={**FAST, "max_attempts": 2}
    )
    assert isinstance(result, ResearchFailed)
    assert (result.stage, result.error_class) == ("submit", "rate_limited")
    assert isinstance(recorder.payloads[0], ProviderCallFailed)
    assert len(recorder.payloads) == 1


def test_5xx_during_polls_is_tolerated_and_recorded(fake, task):
    # submit ok, poll 1 fails (every HTTP attempt), poll 2 ok (running), poll 3 ok (done).
    fake.add_faults("exa", None, *[Fault.status(502)] * 3)
    result, recorder = research(fake, "exa_agent_medium", task)
    assert isinstance(result, ResearchCompleted)
    assert recorder.stages == [
        "research:submit",
        "research:poll:1",
        "research:poll:2",
        "research:poll:3",
    ]
    assert isinstance(recorder.payloads[1], ProviderCallFailed)
    assert recorder.payloads[1].status_code == 502
    assert result.polls == 3


def test_too_many_failed_polls_in_a_row_fail_at_stage_poll(fake, task):
    fake.add_faults("valyu", None)
    fake.set_fault("valyu", Fault.status(500))
    result, recorder = research(fake, "valyu_fast", task, max_poll_failures=3)
    assert isinstance(result, ResearchFailed)
    assert (result.stage, result.error_class) == ("poll", "http_status")
    assert recorder.stages == ["research:submit", *(f"research:poll:{n}" for n in (1, 2, 3))]
    assert result.vendor_run_id is not None


def test_vendor_failed_status_is_a_terminal_failure(fake, task):
    fake.fail_runs("parallel", "processor crashed")
    result, recorder = research(fake, "parallel_task_pro", task)
    assert isinstance(result, ResearchFailed)
    assert (result.stage, result.error_class) == ("poll", "vendor_failed")
    assert "processor crashed" in result.error_message
    assert len(recorder.payloads) == 3  # submit + two polls, no result call


def test_nimble_result_409_while_running_then_200(fake, task):
    # submit, poll 1, poll 2 answer normally; the first result call says "still running".
    fake.add_faults("nimble", None, None, None, Fault.status(409))
    result, recorder = research(fake, "nimble_agent_medium", task)
    assert isinstance(result, ResearchCompleted)
    assert recorder.stages == [
        "research:submit",
        "research:poll:1",
        "research:poll:2",
        "research:result",
        "research:result:2",
    ]
    assert isinstance(recorder.payloads[3], ProviderCallFailed)
    assert recorder.payloads[3].status_code == 409
    assert result.polls == 3


def test_nimble_result_422_is_terminal(fake, task):
    fake.add_faults("nimble", None, None, None, Fault.status(422))
    result, recorder = research(fake, "nimble_agent_high", task)
    assert isinstance(result, ResearchFailed)
    assert (result.stage, result.error_class) == ("result", "vendor_failed")
    assert recorder.stages[-1] == "research:result"


def test_slow_submit_times_out(fake, task):
    fake.set_fault("youcom", Fault.slow(1.0))
    result, _recorder = research(
        fake,
        "youcom_research_exhaustive",
        task,
        policy_changes={**FAST, "attempt_timeout_s": 0.2, "max_attempts": 1},
    )
    assert isinstance(result, ResearchFailed)
    assert (result.stage, result.error_class) == ("submit", "timeout")


def test_poll_deadline(fake, task):
    fake.set_polls_to_complete(10_000)
    result, recorder = research(fake, "gemini_deep_research_max", task, poll_deadline_s=0.1)
    assert isinstance(result, ResearchFailed)
    assert (result.stage, result.error_class) == ("poll", "poll_deadline")
    assert result.wall_clock_ms < 2_000
    assert all(isinstance(p, ProviderCallCompleted) for p in recorder.payloads)


@pytest.mark.parametrize("lane", ["tavily_research_pro", "youcom_research_exhaustive"])
def test_empty_output_is_a_failure_not_a_drop(fake, task, lane):
    fake.set_report(lane.split("_")[0], "  \n")
    result, _recorder = research(fake, lane, task)
    assert isinstance(result, ResearchFailed)
    assert (result.stage, result.error_class) == ("result", "empty_output")
    assert result.source_event_ids  # the raw (empty) report is in the log


def test_malformed_json_on_a_completed_call(fake, task):
    fake.set_fault("exa", Fault.malformed_json())
    result, recorder = research(fake, "exa_deep_reasoning", task)
    assert isinstance(result, ResearchFailed)
    assert (result.stage, result.error_class) == ("submit", "malformed_body")
    assert "502 Bad Gateway" in recorder.payloads[0].raw_body


def test_json_of_the_wrong_shape_fails_at_parse(fake, task):
    fake.add_faults(
        "youcom", Fault("status", code=200, body=json.dumps({"output": {"content": 7}}).encode())
    )
    result, recorder = research(fake, "youcom_research_exhaustive", task)
    assert isinstance(result, ResearchFailed)
    assert (result.stage, result.error_class) == ("parse", "malformed_body")
    assert isinstance(recorder.payloads[0], ProviderCallCompleted)


@pytest.mark.parametrize("status", [401, 402, 403])
def test_auth_failure_aborts_the_lane_after_recording_the_call(fake, task, status):
    fake.add_faults("openai", None, Fault.status(status))  # submit ok, first poll rejected
    recorder = Recorder()

    async def go():
        lane = make_lane(
            "openai_o3_deep_research",
            base_urls=fake.base_urls(),
            poll_interval_s=POLL,
            policy_changes=FAST,
            rate_per_s=RATE,
        )
        async with lane:
            return await lane.research(task, instruction_for(task), attempt=1, emit=recorder)

    with pytest.raises(LaneAborted) as aborted:
        asyncio.run(go())
    assert recorder.stages == ["research:submit", "research:poll:1"]
    assert recorder.payloads[-1] == aborted.value.payload
    assert aborted.value.payload.error_class == "auth"
    assert_no_keys(recorder.dump())


def test_wrong_key_on_submit_aborts(fake, task):
    fake.reset(keys={"exa": "the-right-key"})
    recorder = Recorder()

    async def go():
        lane = make_lane("exa_agent_xhigh", base_urls=fake.base_urls(), policy_changes=FAST)
        async with lane:
            return await lane.research(task, instruction_for(task), attempt=1, emit=recorder)

    with pytest.raises(LaneAborted, match="401"):
        asyncio.run(go())
    assert recorder.stages == ["research:submit"]


def test_tasks_run_concurrently_on_one_lane(fake, task):
    recorder = Recorder()

    async def go():
        lane = make_lane(
            "tavily_research_mini",
            base_urls=fake.base_urls(),
            poll_interval_s=POLL,
            policy_changes=FAST,
            rate_per_s=RATE,
        )
        async with lane:
            return await asyncio.gather(
                *(
                    lane.research(task, instruction_for(task), attempt=n, emit=recorder)
                    for n in (1, 2, 3)
                )
            )

    results = asyncio.run(go())
    assert all(isinstance(r, ResearchCompleted) for r in results)
    assert len({r.vendor_run_id for r in results}) == 3
    assert len(set(recorder.ids)) == 9  # 3 attempts x (submit + 2 polls), ids never collide


# --- vendor-specific terminal states and transient refusals (issue #9) -----------------------


@pytest.mark.parametrize("status", ["incomplete", "budget_exceeded"])
def test_gemini_terminal_statuses_end_the_attempt_at_once(fake, task, status):
    # Before: anything but completed/failed/cancelled kept polling until the deadline.
    fake.fail_runs("gemini", "the agent stopped early", status=status)
    result, recorder = research(fake, "gemini_deep_research", task, poll_deadline_s=3.0)
    assert isinstance(result, ResearchFailed)
    assert (result.stage, result.error_class) == ("poll", "vendor_failed")
    assert "the agent stopped early" in result.error_message
    assert recorder.stages == ["research:submit", "research:poll:1", "research:poll:2"]


def test_nimble_polls_the_run_under_its_web_search_agent(fake, task):
    result, _recorder = research(fake, "nimble_agent_xhigh", task)
    assert isinstance(result, ResearchCompleted)
    gets = [r.path for r in fake.requests_for("nimble") if r.method == "GET"]
    run_id = result.vendor_run_id
    assert run_id and run_id.startswith("task_run_")
    agent = f"wsa_{run_id.removeprefix('task_run_')}"
    assert gets == [
        f"/nimble/v2/agents/{agent}/runs/{run_id}",
        f"/nimble/v2/agents/{agent}/runs/{run_id}",
        f"/nimble/v2/agents/{agent}/runs/{run_id}/result",
    ]


def test_nimble_submit_without_an_agent_id_is_malformed_not_polled(fake, task):
    body = json.dumps({"id": "task_run_9", "status": "queued", "is_active": True}).encode()
    fake.add_faults("nimble", Fault("status", code=200, body=body))
    result, recorder = research(fake, "nimble_agent_low", task)
    assert isinstance(result, ResearchFailed)
    assert (result.stage, result.error_class) == ("parse", "malformed_body")
    assert "web_search_agent_id" in result.error_message
    assert recorder.stages == ["research:submit"]  # never a GET /v2/agents//runs/...


def test_valyu_transient_auth_refusals_on_status_polls_are_retried(fake, task):
    # submit ok, then poll 1 -> 401, poll 2 -> 403, then the run goes on normally.
    fake.add_faults("valyu", None, Fault.status(401), Fault.status(403))
    result, recorder = research(fake, "valyu_heavy", task)
    assert isinstance(result, ResearchCompleted)
    assert recorder.stages == ["research:submit", *(f"research:poll:{n}" for n in (1, 2, 3, 4))]
    assert [p.status_code for p in recorder.payloads[1:3]] == [401, 403]
    assert all(isinstance(p, ProviderCallFailed) for p in recorder.payloads[1:3])
    assert result.polls == 4


def test_valyu_auth_refusal_that_persists_aborts_after_the_bound(fake, task):
    from collectors.vendors.valyu.research import POLL_AUTH_RETRIES

    fake.add_faults("valyu", None)
    fake.set_fault("valyu", Fault.status(403))
    recorder = Recorder()

    async def go():
        lane = make_lane(
            "valyu_fast",
            base_urls=fake.base_urls(),
            poll_interval_s=POLL,
            policy_changes=FAST,
            rate_per_s=RATE,
        )
        async with lane:
            return await lane.research(task, instruction_for(task), attempt=1, emit=recorder)

    with pytest.raises(LaneAborted, match="403"):
        asyncio.run(go())
    polls = POLL_AUTH_RETRIES + 1
    assert recorder.stages == [
        "research:submit",
        *(f"research:poll:{n}" for n in range(1, polls + 1)),
    ]


def test_valyu_402_on_a_poll_aborts_at_once(fake, task):
    fake.add_faults("valyu", None, Fault.status(402))
    recorder = Recorder()

    async def go():
        lane = make_lane(
            "valyu_fast",
            base_urls=fake.base_urls(),
            poll_interval_s=POLL,
            policy_changes=FAST,
            rate_per_s=RATE,
        )
        async with lane:
            return await lane.research(task, instruction_for(task), attempt=1, emit=recorder)

    with pytest.raises(LaneAborted, match="402"):
        asyncio.run(go())
    assert recorder.stages == ["research:submit", "research:poll:1"]


def test_other_vendors_still_abort_on_the_first_poll_refusal(fake, task):
    fake.add_faults("tavily", None, Fault.status(401))
    recorder = Recorder()

    async def go():
        lane = make_lane(
            "tavily_research_mini",
            base_urls=fake.base_urls(),
            poll_interval_s=POLL,
            policy_changes=FAST,
            rate_per_s=RATE,
        )
        async with lane:
            return await lane.research(task, instruction_for(task), attempt=1, emit=recorder)

    with pytest.raises(LaneAborted):
        asyncio.run(go())
    assert recorder.stages == ["research:submit", "research:poll:1"]


@pytest.mark.parametrize(
    ("status", "poll_faults"),
    [(432, 0), (433, 0), (432, 1)],
    ids=["432-submit", "433-submit", "432-poll"],
)
def test_tavily_plan_limit_statuses_stop_the_research_lane(fake, task, status, poll_faults):
    # Tavily's 432 (plan limit) / 433 (pay-as-you-go limit) mean every further call fails the
    # same way: the research lane stops like the search lanes do, not a landed non-answer.
    fake.add_faults("tavily", *([None] * poll_faults), Fault.status(status))
    recorder = Recorder()

    async def go():
        lane = make_lane(
            "tavily_research_pro",
            base_urls=fake.base_urls(),
            poll_interval_s=POLL,
            policy_changes=FAST,
            rate_per_s=RATE,
        )
        async with lane:
            return await lane.research(task, instruction_for(task), attempt=1, emit=recorder)

    with pytest.raises(LaneAborted, match="Tavily") as aborted:
        asyncio.run(go())
    expected = ["research:submit", *(f"research:poll:{n}" for n in range(1, poll_faults + 1))]
    assert recorder.stages == expected
    assert aborted.value.payload.status_code == status
    assert aborted.value.payload.error_class == "auth"
    assert recorder.payloads[-1] == aborted.value.payload
    # One call, not a retried budget: the limit does not lift between attempts.
    assert len(fake.requests_for("tavily")) == 1 + poll_faults
