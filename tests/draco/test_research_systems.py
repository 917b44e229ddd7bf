"""Each vendor research lane against respx mocks of its documented endpoints: request shape,
the full submit -> poll -> result flow, exact text and citations, cost and basis, run id, one
provider-call payload per HTTP exchange (in order, with the right stages), and a terminal
payload that validates as its model. Keys never reach a stored payload."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import respx

from collectors.draco.systems import LANES, LaneConfigError, make_lane, price_for
from collectors.http import MissingApiKey
from tests.draco.research_support import (
    CANARY_KEYS,
    Recorder,
    assert_no_keys,
    assert_terminal_valid,
    draco_task,
    instruction_for,
)
from warehouse.canonical import sha256_hex
from warehouse.events import ProviderCallCompleted, ReportCitation, ResearchCompleted

TEXT = (
    "# Verslag — “deep” research\n\nFirst claim [1]. Second claim [2]; repeated [1].\n\n"
    "Source index:\n[1] https://a.example/x\n"
)
CITED = [
    {"url": "https://a.example/x", "title": "A — x"},
    {"url": "https://b.example/y?q=1", "title": ""},
    {"url": "https://a.example/x", "title": "A — x"},
]
EXPECTED_CITATIONS = [ReportCitation(url=c["url"], title=c["title"]) for c in CITED]
POLL = 0.001


@dataclass
class Case:
    lane: str
    key_env: str
    auth: tuple[str, str]  # header, value prefix before the key
    submit: tuple[str, str]  # method, url
    body: dict[str, Any]  # fields the submit body must have
    exchanges: list[tuple[str, str, int, Any]]  # method, url, status, json (in order)
    stages: list[str]
    run_id: str | None
    cost: float | None = None
    basis: str | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)
    queue_seen: bool = True


NIMBLE = "https://sdk.nimbleway.com/v2/agents"
EXA = "https://api.exa.ai"
PARALLEL = "https://api.parallel.ai/v1/tasks/runs"
OPENAI = "https://api.openai.com/v1/responses"
GEMINI = "https://generativelanguage.googleapis.com/v1/interactions"
VALYU = "https://api.valyu.ai/v1/deepresearch/tasks"
TAVILY = "https://api.tavily.com/research"
PERPLEXITY = "https://api.perplexity.ai/v1/responses"
ASYNC_STAGES = ["research:submit", "research:poll:1", "research:poll:2"]


def _openai_done(model: str) -> dict:
    return {
        "id": "resp_1",
        "status": "completed",
        "model": model,
        "output": [
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": TEXT,
                        "annotations": [
                            {"type": "url_citation", "start_index": 0, "end_index": 3, **c}
                            for c in CITED
                        ],
                    }
                ],
            },
        ],
        "usage": {"input_tokens": 1000, "output_tokens": 2000, "total_tokens": 3000},
    }


CASES = [
    Case(
        lane="nimble_agent_xhigh",
        key_env="NIMBLE_API_KEY",
        auth=("authorization", "Bearer "),
        submit=("POST", f"{NIMBLE}/runs"),
        body={"effort": "x-high", "use_case": "research"},
        exchanges=[
            (
                "POST",
                f"{NIMBLE}/runs",
                200,
                {
                    "id": "task_run_7",
                    "web_search_agent_id": "wsa_3",
                    "interaction_id": "int_1",
                    "effort": "x-high",
                    "created_at": "2026-12-01T00:00:00Z",
                    "is_active": True,
                    "status": "queued",
                },
            ),
            (
                "GET",
                f"{NIMBLE}/wsa_3/runs/task_run_7",
                200,
                {"status": "running", "is_active": True},
            ),
            (
                "GET",
                f"{NIMBLE}/wsa_3/runs/task_run_7",
                200,
                {"status": "completed", "is_active": False},
            ),
            (
                "GET",
                f"{NIMBLE}/wsa_3/runs/task_run_7/result",
                200,
                {
                    "output": {
                        "type": "text",
                        "content": TEXT,
                        "trust": {"sources": CITED, "claims": []},
                    }
                },
            ),
        ],
        stages=[*ASYNC_STAGES, "research:result"],
        run_id="task_run_7",
    ),
    Case(
        lane="exa_agent_high",
        key_env="EXA_API_KEY",
        auth=("x-api-key", ""),
        submit=("POST", f"{EXA}/agent/runs"),
        body={"effort": "high"},
        extra_headers={"exa-beta": "agent-2026-05-07"},
        exchanges=[
            ("POST", f"{EXA}/agent/runs", 200, {"id": "run_x1", "status": "pending"}),
            ("GET", f"{EXA}/agent/runs/run_x1", 200, {"id": "run_x1", "status": "running"}),
            (
                "GET",
                f"{EXA}/agent/runs/run_x1",
                200,
                {
                    "id": "run_x1",
                    "status": "completed",
                    "output": {
                        "text": TEXT,
                        "grounding": [
                            {"field": "text", "citations": CITED[:2]},
                            {"field": "text", "citations": CITED[2:]},
                        ],
                    },
                    "cost_dollars": {"total": 0.5, "breakdown": {}},
                },
            ),
        ],
        stages=ASYNC_STAGES,
        run_id="run_x1",
        cost=0.5,
        basis="billed",
    ),
    Case(
        lane="exa_deep_reasoning",
        key_env="EXA_API_KEY",
        auth=("x-api-key", ""),
        submit=("POST", f"{EXA}/search"),
        body={"type": "deep-reasoning", "numResults": 10, "contents": {"highlights": True}},
        exchanges=[
            (
                "POST",
                f"{EXA}/search",
                200,
                {
                    "requestId": "req_9",
                    "results": [],
                    "output": {
                        "content": TEXT,
                        "grounding": [{"field": "content", "citations": CITED}],
                    },
                    "costDollars": {"total": 0.015},
                },
            ),
        ],
        stages=["research:submit"],
        run_id="req_9",
        cost=0.015,
        basis="billed",
        queue_seen=False,
    ),
    Case(
        lane="parallel_task_ultra8x",
        key_env="PARALLEL_API_KEY",
        auth=("x-api-key", ""),
        submit=("POST", PARALLEL),
        body={
            "processor": "ultra8x",
            "task_spec": {
                "output_schema": {"type": "text", "description": "A report answering the input."}
            },
        },
        exchanges=[
            ("POST", PARALLEL, 202, {"run_id": "trun_1", "status": "queued", "is_active": True}),
            (
                "GET",
                f"{PARALLEL}/trun_1",
                200,
                {"run_id": "trun_1", "status": "running", "is_active": True},
            ),
            (
                "GET",
                f"{PARALLEL}/trun_1",
                200,
                {"run_id": "trun_1", "status": "completed", "is_active": False},
            ),
            (
                "GET",
                f"{PARALLEL}/trun_1/result",
                200,
                {
                    "run": {"run_id": "trun_1", "status": "completed"},
                    "output": {
                        "type": "text",
                        "content": TEXT,
                        "basis": [
                            {
                                "field": "content",
                                "citations": CITED,
                                "reasoning": "r",
                                "confidence": "high",
                            }
                        ],
                    },
                },
            ),
        ],
        stages=[*ASYNC_STAGES, "research:result"],
        run_id="trun_1",
    ),
    Case(
        lane="openai_o3_deep_research",
        key_env="OPENAI_API_KEY",
        auth=("authorization", "Bearer "),
        submit=("POST", OPENAI),
        body={
            "model": "o3-deep-research",
            "background": True,
            "tools": [{"type": "web_search_preview"}],
        },
        exchanges=[
            (
                "POST",
                OPENAI,
                200,
                {"id": "resp_1", "status": "queued", "model": "o3-deep-research"},
            ),
            ("GET", f"{OPENAI}/resp_1", 200, {"id": "resp_1", "status": "in_progress"}),
            ("GET", f"{OPENAI}/resp_1", 200, _openai_done("o3-deep-research-2025-06-26")),
        ],
        stages=ASYNC_STAGES,
        run_id="resp_1",
        cost=1000 * 10 / 1e6 + 2000 * 40 / 1e6 + 25 / 1000,
        basis="list_price",
    ),
    Case(
        lane="openai_gpt55_web",
        key_env="OPENAI_API_KEY",
        auth=("authorization", "Bearer "),
        submit=("POST", OPENAI),
        body={"model": "gpt-5.5", "tools": [{"type": "web_search_preview"}]},
        exchanges=[("POST", OPENAI, 200, _openai_done("gpt-5.5"))],
        stages=["research:submit"],
        run_id="resp_1",
        queue_seen=False,
    ),
    Case(
        lane="gemini_deep_research_max",
        key_env="GEMINI_API_KEY",
        auth=("x-goog-api-key", ""),
        submit=("POST", GEMINI),
        body={"agent": "deep-research-max-preview-04-2026", "background": True},
        exchanges=[
            ("POST", GEMINI, 200, {"id": "v1_abc", "status": "in_progress"}),
            ("GET", f"{GEMINI}/v1_abc", 200, {"id": "v1_abc", "status": "in_progress"}),
            (
                "GET",
                f"{GEMINI}/v1_abc",
                200,
                {
                    "id": "v1_abc",
                    "status": "completed",
                    "steps": [
                        {"type": "user_input", "content": [{"type": "text", "text": "q"}]},
                        {"type": "google_search_call", "id": "gs_1", "arguments": {}},
                        {
                            "type": "model_output",
                            "content": [{"type": "text", "text": "interim notes"}],
                        },
                        {"type": "google_search_result", "call_id": "gs_1", "result": []},
                        {"type": "thought", "summary": [{"type": "text", "text": "thinking"}]},
                        {
                            "type": "model_output",
                            "content": [
                                {
                                    "type": "text",
                                    "text": TEXT[:20],
                                    "annotations": [
                                        {"type": "url_citation", "start_index": 1, **c}
                                        for c in CITED[:1]
                                    ],
                                },
                                {
                                    "type": "text",
                                    "text": TEXT[20:],
                                    "annotations": [
                                        {"type": "url_citation", "start_index": 1, **c}
                                        for c in CITED[1:]
                                    ],
                                },
                            ],
                        },
                    ],
                    "usage": {"total_tokens": 99},
                },
            ),
        ],
        stages=ASYNC_STAGES,
        run_id="v1_abc",
        queue_seen=False,
    ),
    Case(
        lane="valyu_heavy",
        key_env="VALYU_API_KEY",
        auth=("x-api-key", ""),
        submit=("POST", VALYU),
        body={"model": "heavy", "search": {"search_type": "all"}, "code_execution": True},
        exchanges=[
            ("POST", VALYU, 200, {"deepresearch_id": "dr_5", "status": "queued"}),
            ("GET", f"{VALYU}/dr_5/status", 200, {"deepresearch_id": "dr_5", "status": "running"}),
            (
                "GET",
                f"{VALYU}/dr_5/status",
                200,
                {
                    "deepresearch_id": "dr_5",
                    "status": "completed",
                    "output": TEXT,
                    "sources": [{**c, "snippet": "s"} for c in CITED],
                    "cost": 2.5,
                },
            ),
        ],
        stages=ASYNC_STAGES,
        run_id="dr_5",
        cost=2.5,
        basis="billed",
    ),
    Case(
        lane="youcom_research_exhaustive",
        key_env="YDC_API_KEY",
        auth=("x-api-key", ""),
        submit=("POST", "https://api.you.com/v1/research"),
        body={"research_effort": "exhaustive"},
        exchanges=[
            (
                "POST",
                "https://api.you.com/v1/research",
                200,
                {"output": {"content": TEXT, "content_type": "text", "sources": CITED}},
            )
        ],
        stages=["research:submit"],
        run_id=None,
        queue_seen=False,
    ),
    Case(
        lane="tavily_research_pro",
        key_env="TAVILY_API_KEY",
        auth=("authorization", "Bearer "),
        submit=("POST", TAVILY),
        body={"model": "pro", "citation_format": "numbered"},
        exchanges=[
            ("POST", TAVILY, 201, {"request_id": "tv_1", "status": "pending"}),
            ("GET", f"{TAVILY}/tv_1", 200, {"request_id": "tv_1", "status": "in_progress"}),
            (
                "GET",
                f"{TAVILY}/tv_1",
                200,
                {"request_id": "tv_1", "status": "completed", "content": TEXT, "sources": CITED},
            ),
        ],
        stages=ASYNC_STAGES,
        run_id="tv_1",
    ),
    Case(
        lane="perplexity_sonar_deep_research",
        key_env="PERPLEXITY_API_KEY",
        auth=("authorization", "Bearer "),
        submit=("POST", PERPLEXITY),
        body={"preset": "deep-research", "background": True},
        exchanges=[
            ("POST", PERPLEXITY, 200, {"id": "resp_p9", "status": "queued", "output": []}),
            ("GET", f"{PERPLEXITY}/resp_p9", 200, {"id": "resp_p9", "status": "in_progress"}),
            (
                "GET",
                f"{PERPLEXITY}/resp_p9",
                200,
                {
                    "id": "resp_p9",
                    "object": "response",
                    "status": "completed",
                    "model": "perplexity/deep-research",
                    "created_at": 1,
                    "output": [
                        {
                            "type": "search_results",
                            "results": [
                                {"id": 1, "url": CITED[1]["url"], "title": "", "snippet": "s"}
                            ],
                        },
                        {
                            "type": "message",
                            "id": "m1",
                            "role": "assistant",
                            "status": "completed",
                            "content": [
                                {
                                    "type": "output_text",
                                    "text": TEXT,
                                    "annotations": [
                                        {"type": "url_citation", **CITED[0]},
                                        {"type": "url_citation", "url": CITED[1]["url"]},
                                        {"type": "url_citation", **CITED[2]},
                                    ],
                                }
                            ],
                        },
                    ],
                    "usage": {
                        "input_tokens": 100,
                        "output_tokens": 1000,
                        "total_tokens": 1100,
                        "cost": {
                            "currency": "USD",
                            "input_cost": 0.1,
                            "output_cost": 0.5,
                            "total_cost": 0.75,
                        },
                    },
                },
            ),
        ],
        stages=ASYNC_STAGES,
        run_id="resp_p9",
        cost=0.75,
        basis="billed",
    ),
]


@pytest.fixture(scope="module")
def task(shared_data):
    return draco_task(shared_data)


@pytest.fixture
def keys(monkeypatch):
    for name, value in CANARY_KEYS.items():
        monkeypatch.setenv(name, value)
    return CANARY_KEYS


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _run_case(case: Case, task, instruction: str):
    recorder = Recorder()

    async def go():
        # respx answers in-process: no vendor pacing (the default is 2 requests/s)
        lane = make_lane(case.lane, poll_interval_s=POLL, rate_per_s=1000.0)
        async with lane:
            return await lane.research(task, instruction, attempt=1, emit=recorder)

    with respx.mock(assert_all_called=True, assert_all_mocked=True, using="httpx") as router:
        by_route: dict[tuple[str, str], list[httpx.Response]] = {}
        for method, url, status, document in case.exchanges:
            by_route.setdefault((method, url), []).append(httpx.Response(status, json=document))
        for (method, url), responses in by_route.items():
            router.request(method, url).mock(side_effect=responses)
        result = asyncio.run(go())
        sent = [call.request for call in router.calls]
    return result, recorder, sent


@pytest.mark.parametrize("case", CASES, ids=[c.lane for c in CASES])
def test_vendor_flow(case: Case, task, keys):
    instruction = instruction_for(task)
    result, recorder, sent = _run_case(case, task, instruction)

    # The request as sent: method, URL, auth header, documented body fields, the instruction.
    method, url = case.submit
    first = sent[0]
    assert (first.method, str(first.url)) == (method, url)
    header, prefix = case.auth
    assert first.headers[header] == prefix + keys[case.key_env]
    for name, value in case.extra_headers.items():
        assert all(request.headers[name] == value for request in sent)
    body = json.loads(first.content)
    for name, value in case.body.items():
        assert body[name] == value, name
    assert instruction in _strings(body)  # sent as is, once, no vendor-specific framing
    assert [(r.method, str(r.url)) for r in sent] == [(m, u) for m, u, _s, _d in case.exchanges]

    # One emitted provider call per exchange, in order, with the right stages.
    assert recorder.stages == case.stages
    assert all(isinstance(p, ProviderCallCompleted) for p in recorder.payloads)
    assert [p.lane for p in recorder.payloads] == [case.lane] * len(case.stages)

    # The terminal payload.
    assert isinstance(result, ResearchCompleted), result
    assert_terminal_valid(result)
    assert result.raw_output == TEXT
    assert result.raw_citations == EXPECTED_CITATIONS
    assert result.vendor_run_id == case.run_id
    assert result.instruction_sha256 == sha256_hex(instruction.encode("utf-8"))
    assert result.source_event_ids == recorder.ids
    assert result.polls == len(case.stages) - 1 - (case.stages[-1] == "research:result")
    assert result.item_id == task.item_id and result.lane == case.lane
    if case.cost is None:
        assert result.cost_usd is None and result.cost_basis is None
    else:
        assert result.cost_usd == pytest.approx(case.cost)
        assert result.cost_basis == case.basis
    synchronous = LANES[case.lane].poll_interval_s is None
    assert result.poll_interval_s == (None if synchronous else POLL)
    assert (result.queue_ms is not None) == case.queue_seen
    assert result.wall_clock_ms > 0 and result.submitted_at <= result.finished_at

    # Secrets: the stored request has the auth header redacted, and no key anywhere.
    stored = recorder.payloads[0].request
    assert stored.headers[header] == "[REDACTED]"
    assert_no_keys(recorder.dump() + json.dumps(result.model_dump(mode="json")))


def test_every_lane_is_built_and_describes_itself(keys):
    for name, spec in LANES.items():
        if spec.api is None:
            continue
        lane = make_lane(name)
        ref = lane.system_ref()
        assert ref.name == name and ref.settings["provider"] == spec.provider
        assert ref.settings["price_usd_per_task"] == price_for(name)[0]
        assert_no_keys(json.dumps(ref.model_dump(mode="json")))


def test_lane_names_are_the_fixed_registry():
    expected = {
        *(f"nimble_agent_{t}" for t in ("low", "medium", "high", "xhigh", "max")),
        *(f"exa_agent_{t}" for t in ("low", "medium", "high", "xhigh")),
        "exa_deep_reasoning",
        *(
            f"parallel_task_{p}"
            for p in (
                "lite",
                "base",
                "core",
                "core2x",
                "pro",
                "ultra",
                "ultra2x",
                "ultra4x",
                "ultra8x",
            )
        ),
        "openai_gpt55_web",
        "openai_gpt55pro_web",
        "openai_o3_deep_research",
        "openai_o4mini_deep_research",
        "gemini_deep_research",
        "gemini_deep_research_max",
        *(f"valyu_{m}" for m in ("fast", "standard", "heavy", "max")),
        "youcom_research_exhaustive",
        *(f"tavily_research_{m}" for m in ("mini", "pro", "auto")),
        "perplexity_sonar_deep_research",
        "local-rag",
        "local-rag-shallow",
        "local-rag-deep",
        "closed-book-research",
    }
    assert set(LANES) == expected


@pytest.mark.parametrize(
    ("lane", "price"),
    [
        ("parallel_task_lite", (0.005, "list_price", None)),
        ("parallel_task_ultra8x", (2.4, "list_price", None)),
        ("valyu_heavy", (2.5, "list_price", None)),
        ("youcom_research_exhaustive", (0.45, "list_price", None)),
        ("tavily_research_pro", (1.06, "estimate", None)),
        ("exa_deep_reasoning", (0.015, "list_price", None)),
        ("nimble_agent_xhigh", (2.0, "estimate", None)),
        ("nimble_agent_high", (0.5, "estimate", None)),
        ("local-rag", (0.03, "demo price", None)),  # made up for the demo, labelled so
        ("closed-book-research", (0.002, "demo price", None)),
        ("openai_o3_deep_research", (None, None, None)),
        ("exa_agent_xhigh", (None, None, None)),
        ("gemini_deep_research_max", (None, None, None)),
    ],
)
def test_price_for(lane, price):
    assert price_for(lane) == price


def test_missing_key_is_named_before_anything_runs(monkeypatch):
    for name in CANARY_KEYS:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(MissingApiKey, match="EXA_API_KEY"):
        make_lane("exa_agent_low")
    monkeypatch.setenv("YOU_API_KEY", "fallback-key")
    make_lane("youcom_research_exhaustive")  # You.com's second key name is accepted


def test_unknown_lane_lists_the_known_ones():
    with pytest.raises(LaneConfigError, match="parallel_task_core"):
        make_lane("parallel_task_mega")


def test_base_url_override_by_provider_and_lane(keys):
    by_provider = make_lane("tavily_research_mini", base_urls={"tavily": "http://127.0.0.1:9/t"})
    by_lane = make_lane(
        "tavily_research_mini",
        base_urls={"tavily": "http://x", "tavily_research_mini": "http://127.0.0.1:9/l"},
    )
    assert by_provider.base_url == "http://127.0.0.1:9/t"
    assert by_lane.base_url == "http://127.0.0.1:9/l"


def test_research_outside_the_context_manager_says_how(task, keys):
    lane = make_lane("tavily_research_mini")
    with pytest.raises(RuntimeError, match="async with"):
        asyncio.run(lane.research(task, "x", attempt=1, emit=Recorder()))


@pytest.mark.parametrize(
    ("status", "phase"),
    [
        ("queued", "queued"),
        ("in_progress", "running"),
        ("requires_action", "running"),
        ("completed", "completed"),
        ("failed", "failed"),
        ("cancelled", "failed"),
        ("incomplete", "failed"),
        ("budget_exceeded", "failed"),
        ("requires_continuation", "running"),
        ("idle", "running"),
    ],
)
def test_gemini_statuses_terminal_or_not(status, phase):
    """Every status of google-genai's `InteractionStatus` has a phase; the terminal ones end
    polling (incomplete / budget_exceeded used to be polled until the deadline)."""
    from collectors.vendors.gemini.research import GeminiDeepResearchApi

    document = {"id": "v1_x", "status": status, "steps": []}
    if status == "budget_exceeded":
        document["errors"] = [{"code": "budget", "message": "budget exceeded"}]
    state = GeminiDeepResearchApi(agent="deep-research-preview-04-2026").read_submit(document)
    assert state.phase == phase
    if status == "budget_exceeded":
        assert state.message == "budget exceeded"


def test_gemini_reads_steps_not_the_removed_outputs_list():
    from collectors.products.research import VendorShapeError
    from collectors.vendors.gemini.research import parse_interaction

    with pytest.raises(VendorShapeError, match="steps"):
        parse_interaction({"status": "completed", "outputs": [{"type": "text", "text": "x"}]})


def test_perplexity_citation_title_falls_back_to_the_search_results():
    from collectors.vendors.perplexity.research import parse_response

    report = parse_response(
        {
            "output": [
                {"type": "search_results", "results": [{"url": "https://x.example", "title": "X"}]},
                {
                    "type": "message",
                    "content": [
                        {
                            "type": "output_text",
                            "text": "t",
                            "annotations": [{"type": "url_citation", "url": "https://x.example"}],
                        }
                    ],
                },
            ]
        }
    )
    assert report.citations == (ReportCitation(url="https://x.example", title="X"),)
