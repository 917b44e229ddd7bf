"""Our research clients held against the vendors' official SDKs (issue #9), one block per vendor:

(a) the request our client sends is the request the SDK sends for the same call (method, path,
    auth header, body), and validates against the SDK's own request type where it has one;
(b) our parser reads documents built from the SDK's own response models with every field
    filled (tests/draco/sdk_samples.py), and the SDK's own recorded examples where it ships
    them; report text is compared with the SDK's own text helper where it has one;
(c) the SDK itself, pointed at the loopback research fake, completes a run, so the fake speaks
    the vendor's wire format and not ours.

The installed SDK version must be the one each vendor module records (SDK_CHECK): a bump fails
here until the module is re-checked.
"""

from __future__ import annotations

import json
import warnings
from importlib import metadata
from typing import Any, get_args
from urllib.parse import parse_qs, urlsplit

import pytest

from collectors.draco.systems.sdk_checks import CHECKED_ON
from collectors.products.research import PREFLIGHT_RUN_ID
from collectors.vendors.exa import research as exa
from collectors.vendors.gemini import research as gemini
from collectors.vendors.nimble import research as nimble
from collectors.vendors.openai import research as openai_responses
from collectors.vendors.parallel import research as parallel
from collectors.vendors.perplexity import research as perplexity
from collectors.vendors.tavily import research as tavily
from collectors.vendors.valyu import research as valyu
from collectors.vendors.youcom import research as youcom
from tests.draco.sdk_samples import field_names, sample, wire
from tests.fakes.research_fake import DEFAULT_CITATIONS, DEFAULT_REPORT, FakeResearchServer

MODULES = [exa, gemini, nimble, openai_responses, parallel, perplexity, tavily, valyu, youcom]
KEY = "sdk-contract-key"
INSTRUCTION = "Write a research report on tide pools. Cite your sources."
TEXT = "# Tide pools\n\nFirst claim [1]. Second claim [2].\n"
CITED = [("https://a.example/x", "A"), ("https://b.example/y?q=1", "B")]
DEFAULT = [(c["url"], c["title"]) for c in DEFAULT_CITATIONS]

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


@pytest.fixture(scope="module")
def fake():
    with FakeResearchServer(polls_to_complete=1) as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh(fake):
    fake.reset(keys={})
    fake.set_polls_to_complete(1)  # one status poll completes a run


def pairs(citations) -> list[tuple[str, str]]:
    return [(c.url, c.title) for c in citations]


def body_of(request) -> dict[str, Any]:
    return json.loads(request.body) if request.body else {}


def assert_same_request(ours, sdk_sent, auth: str, sdk_extra: frozenset[str] = frozenset()):
    """Our ProviderRequest vs the request the SDK put on the wire (both aimed at the fake). The
    SDK may send a few fields of its own (named per vendor in `sdk_extra`); every field we send
    it sends too, with the same value."""
    assert (ours.method, urlsplit(ours.url).path) == (sdk_sent.method, sdk_sent.path)
    assert {k.lower(): v for k, v in ours.headers.items()}[auth] == sdk_sent.headers[auth]
    sent = body_of(sdk_sent)
    ours_body = ours.json_body or {}
    assert {k: sent.get(k) for k in ours_body} == ours_body
    assert set(sent) - set(ours_body) <= set(sdk_extra), set(sent) - set(ours_body)


def typed_dict_check(params: type, body: dict[str, Any]) -> None:
    """Our body against the SDK's request TypedDict: no field it does not define, and every
    value of the type (Literal values, nesting) the SDK declares, strictly."""
    from pydantic import TypeAdapter

    assert set(body) <= set(params.__annotations__), set(body) - set(params.__annotations__)
    TypeAdapter(params).validate_python(body, strict=True)


# --- versions ------------------------------------------------------------------------------


def test_every_research_vendor_is_held_against_its_sdk():
    from collectors.draco.systems import LANES

    vendors = {spec.provider for spec in LANES.values() if spec.api is not None}
    assert {m.PROVIDER for m in MODULES} == vendors and len(vendors) == 9


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_installed_sdk_is_the_version_the_module_was_checked_against(module):
    check = module.SDK_CHECK
    assert metadata.version(check.package) == check.version, (
        f"{check.package} is now {metadata.version(check.package)}: re-check "
        f"{module.__name__} against it (and {check.docs}), then update SDK_CHECK"
    )
    assert check.checked_on == CHECKED_ON == "2026-12-01"
    assert check.docs.startswith("https://")


# --- Gemini (google-genai) -------------------------------------------------------------------


def _genai(fake):
    from google import genai
    from google.genai import types

    options = types.HttpOptions(
        base_url=f"{fake.base_url}/gemini", retry_options=types.HttpRetryOptions(attempts=1)
    )
    return genai.Client(api_key=KEY, http_options=options)


def test_gemini_request_and_fake_against_the_sdk(fake):
    from google.genai._gaos.types.interactions.createagentinteraction import (
        CreateAgentInteraction,
    )

    api = gemini.GeminiDeepResearchApi(agent=gemini.AGENTS["gemini_deep_research_max"])
    client = _genai(fake)
    created = client.interactions.create(agent=api.agent, input=INSTRUCTION, background=True)
    done = client.interactions.get(created.id)
    assert done.status == "completed" and done.output_text == DEFAULT_REPORT  # (c)
    models = list(client.models.list(config={"page_size": 1}))
    assert [m.name for m in models], "the SDK read no model from the fake's models list"

    ours = api.submit(f"{fake.base_url}/gemini", KEY, INSTRUCTION)
    sdk_submit, sdk_get, sdk_models = fake.requests_for("gemini")
    # Our preflight probe is the SDK's own models-list request: method, path, query, auth.
    probe = api.preflight_probe(f"{fake.base_url}/gemini", KEY).request
    assert_same_request(probe, sdk_models, "x-goog-api-key")
    assert parse_qs(urlsplit(probe.url).query) == parse_qs(sdk_models.query)
    assert_same_request(ours, sdk_submit, "x-goog-api-key")  # (a)
    CreateAgentInteraction.model_validate(ours.json_body)
    assert sdk_get.path == f"/gemini{gemini.INTERACTIONS_PATH}/{created.id}"
    assert api.poll("http://h", KEY, api.read_submit(created.model_dump(mode="json"))).url == (
        f"http://h{gemini.INTERACTIONS_PATH}/{created.id}"
    )


def _gemini_text_item(text: str, cited: list[tuple[str, str]]) -> dict[str, Any]:
    from google.genai._gaos.types.interactions.textcontent import TextContent
    from google.genai._gaos.types.interactions.urlcitation import URLCitation

    return {
        **sample(TextContent),
        "type": "text",
        "text": text,
        "annotations": [{**sample(URLCitation), "url": u, "title": t} for u, t in cited],
    }


def test_gemini_parser_reads_a_full_sdk_interaction():
    from google.genai._gaos.types.interactions.googlesearchcallstep import GoogleSearchCallStep
    from google.genai._gaos.types.interactions.interaction import Interaction
    from google.genai._gaos.types.interactions.modeloutputstep import ModelOutputStep
    from google.genai._gaos.types.interactions.thoughtstep import ThoughtStep
    from google.genai._gaos.types.interactions.userinputstep import UserInputStep

    document = sample(Interaction)
    document["status"] = "completed"
    document["steps"] = [
        {**sample(UserInputStep), "type": "user_input"},
        {**sample(ModelOutputStep), "content": [_gemini_text_item("draft", [])]},
        {**sample(GoogleSearchCallStep), "type": "google_search_call"},  # ends the draft
        {**sample(ThoughtStep), "type": "thought"},
        {
            **sample(ModelOutputStep),
            "content": [
                _gemini_text_item(TEXT[:10], CITED[:1]),
                _gemini_text_item(TEXT[10:], CITED[1:]),
            ],
        },
    ]
    sdk = Interaction.model_validate(document)
    on_the_wire = sdk.model_dump(mode="json", by_alias=True)
    assert {"steps", "status", "usage", "id"} <= set(on_the_wire)
    state = gemini.GeminiDeepResearchApi(agent="a").read_submit(on_the_wire)
    assert state.phase == "completed"
    assert state.report.text == sdk.output_text == TEXT  # the SDK's own text helper
    assert pairs(state.report.citations) == CITED


def _sdk_output_text_examples():
    # The SDK's test module marks other tests `asyncio`, a marker this project does not
    # register: import it with pytest's strict-marker check off, then restore it.
    config, pytest.mark._config = pytest.mark._config, None
    try:
        from google.genai.tests.interactions import test_integration
    finally:
        pytest.mark._config = config

    (mark,) = [m for m in test_integration.test_output_text_across_steps.pytestmark]
    return [pytest.param(*p.values, id=p.id) for p in mark.args[1]]


@pytest.mark.parametrize(("steps", "expected"), _sdk_output_text_examples())
def test_gemini_report_text_on_the_sdks_own_examples(steps, expected):
    """google-genai's own `output_text` test vectors (tests/interactions/test_integration.py)."""
    report = gemini.parse_interaction({"status": "completed", "steps": steps})
    assert report.text == expected


def test_gemini_every_sdk_status_has_a_phase():
    from google.genai._gaos.types.interactions.interaction import InteractionStatus

    (known, _open) = get_args(InteractionStatus)
    assert set(get_args(known)) == set(gemini._PHASES)


# --- Nimble (nimble-python) ------------------------------------------------------------------


def _nimble(fake):
    from nimble_python import Nimble

    return Nimble(api_key=KEY, base_url=f"{fake.base_url}/nimble", max_retries=0)


def test_nimble_request_and_fake_against_the_sdk(fake):
    from nimble_python.types.agent_run_params import AgentRunParams

    api = nimble.NimbleAgentApi(effort=nimble.EFFORTS["xhigh"])
    client = _nimble(fake)
    run = client.agents.run(input=INSTRUCTION, effort="x-high", use_case="research")
    polled = client.agents.runs.get(run.id, agent_id=run.web_search_agent_id)
    result = client.agents.runs.result(run.id, agent_id=run.web_search_agent_id)
    assert polled.status == "completed" and result.output.content == DEFAULT_REPORT  # (c)
    client.agents.list()

    ours = api.submit(f"{fake.base_url}/nimble", KEY, INSTRUCTION)
    sdk_run, sdk_get, sdk_result, sdk_list = fake.requests_for("nimble")
    assert_same_request(ours, sdk_run, "authorization")  # (a)
    typed_dict_check(AgentRunParams, ours.json_body)
    state = api.read_submit(run.model_dump(mode="json"))
    assert state.run_id == run.id and state.ids[nimble.AGENT_ID] == run.web_search_agent_id
    assert api.poll("", KEY, state).url == sdk_get.path.removeprefix("/nimble")
    assert api.result("", KEY, state).url == sdk_result.path.removeprefix("/nimble")
    assert api.preflight_probe("", KEY).request.url == sdk_list.path.removeprefix("/nimble")


def test_nimble_parser_reads_full_sdk_run_and_result_models():
    from nimble_python.types.agent_run_response import AgentRunResponse
    from nimble_python.types.agents.run_get_response import RunGetResponse
    from nimble_python.types.agents.run_result_response import (
        TaskRunResultPublicV2,
    )
    from nimble_python.types.agents.run_result_response import (
        TaskRunResultPublicV2OutputTaskRunTextOutputPublicV2TrustSource as Source,
    )

    api = nimble.NimbleAgentApi(effort="high")
    run = wire(AgentRunResponse, {**sample(AgentRunResponse), "status": "failed"})
    state = api.read_submit(run)
    assert (state.run_id, state.ids[nimble.AGENT_ID]) == (run["id"], run["web_search_agent_id"])
    assert state.phase == "failed" and state.message == run["error"]["message"]
    assert api.read_poll(wire(RunGetResponse, sample(RunGetResponse))).phase == "queued"

    document = sample(TaskRunResultPublicV2)
    document["output"] = {
        **document["output"],
        "type": "text",
        "content": TEXT,
        "trust": {
            **document["output"]["trust"],
            "sources": [{**sample(Source), "url": u, "title": t} for u, t in CITED],
        },
    }
    report = api.read_result(wire(TaskRunResultPublicV2, document))
    assert report.text == TEXT and pairs(report.citations) == CITED


def test_nimble_every_sdk_status_has_a_phase():
    from nimble_python.types.agent_run_response import AgentRunResponse

    statuses = get_args(AgentRunResponse.model_fields["status"].annotation)
    assert set(statuses) <= set(nimble._PHASES)
    efforts = get_args(AgentRunResponse.model_fields["effort"].annotation)
    assert set(nimble.EFFORTS.values()) <= set(efforts)


# --- Perplexity (perplexityai) ---------------------------------------------------------------


def _perplexity(fake):
    from perplexity import Perplexity

    return Perplexity(api_key=KEY, base_url=f"{fake.base_url}/perplexity", max_retries=0)


def test_perplexity_request_and_fake_against_the_sdk(fake):
    from perplexity.generated.api import ResponsesRequestInput

    api = perplexity.PerplexityDeepResearchApi()
    client = _perplexity(fake)
    created = client.responses.create(input=INSTRUCTION, preset=api.preset, background=True)
    done = client.responses.retrieve(created.id)
    assert done.status == "completed" and done.output_text == DEFAULT_REPORT  # (c)
    client.models.list()

    ours = api.submit(f"{fake.base_url}/perplexity", KEY, INSTRUCTION)
    sdk_create, sdk_get, sdk_models = fake.requests_for("perplexity")
    assert_same_request(ours, sdk_create, "authorization")  # (a)
    ResponsesRequestInput.model_validate(ours.json_body)
    state = api.read_submit(created.model_dump(mode="json", by_alias=True))
    assert api.poll("", KEY, state).url == sdk_get.path.removeprefix("/perplexity")
    assert api.preflight_probe("", KEY).request.url == sdk_models.path.removeprefix("/perplexity")
    report = api.read_poll(done.model_dump(mode="json", by_alias=True)).report
    assert pairs(report.citations) == DEFAULT and report.cost_usd == pytest.approx(0.71)


def test_perplexity_parser_reads_a_full_sdk_response():
    from perplexity.generated import api as sdk

    def part(text, cited):
        return {
            **sample(sdk.ContentPartOutput),
            "type": "output_text",
            "text": text,
            "annotations": [
                {**sample(sdk.AnnotationOutput), "type": "url_citation", "url": u, "title": t}
                for u, t in cited
            ],
        }

    document = sample(sdk.ResponsesResponseOutput)
    document["status"] = "completed"
    document["output"] = [
        {**sample(sdk.SearchResultsOutputItemOutput), "type": "search_results"},
        {
            **sample(sdk.MessageOutputItemOutput),
            "type": "message",
            "content": [part(TEXT[:7], CITED[:1]), part(TEXT[7:], CITED[1:])],
        },
    ]
    model = sdk.ResponsesResponseOutput.model_validate(document)
    on_the_wire = model.model_dump(mode="json", by_alias=True)
    state = perplexity.PerplexityDeepResearchApi().read_submit(on_the_wire)
    assert state.report.text == model.output_text == TEXT  # the SDK's own text helper
    assert pairs(state.report.citations) == CITED
    total = on_the_wire["usage"]["cost"]["total_cost"]
    assert (state.report.cost_usd, state.report.cost_basis) == (total, "billed")


def test_perplexity_every_sdk_status_has_a_phase():
    from perplexity.generated.api import StatusOutput

    assert set(get_args(StatusOutput)) == set(perplexity._PHASES)


# --- Valyu (valyu) ---------------------------------------------------------------------------


def test_valyu_request_and_fake_against_the_sdk(fake):
    from valyu import Valyu

    api = valyu.ValyuDeepResearchApi(mode="heavy")
    client = Valyu(api_key=KEY, base_url=f"{fake.base_url}/valyu/v1")
    created = client.deepresearch.create(
        input=INSTRUCTION, model="heavy", search={"search_type": "all"}, code_execution=True
    )
    assert created.success, created.error
    status = client.deepresearch.status(created.deepresearch_id)
    assert status.success and status.output == DEFAULT_REPORT  # (c)
    assert client.deepresearch.list(limit=1).success

    ours = api.submit(f"{fake.base_url}/valyu", KEY, INSTRUCTION)
    sdk_create, sdk_status, sdk_list = fake.requests_for("valyu")
    # The SDK also sends the legacy aliases query/mode and its default output format.
    assert_same_request(
        ours, sdk_create, "x-api-key", sdk_extra=frozenset({"query", "mode", "output_formats"})
    )
    state = api.read_submit(created.model_dump(mode="json"))
    assert api.poll("", KEY, state).url == sdk_status.path.removeprefix("/valyu")
    sdk_list_url = f"{sdk_list.path}?{sdk_list.query}".removeprefix("/valyu")
    assert api.preflight_probe("", KEY).request.url == sdk_list_url


def test_valyu_parser_reads_a_full_sdk_status():
    from valyu.types.deepresearch import DeepResearchSource, DeepResearchStatusResponse

    document = sample(DeepResearchStatusResponse)
    document.update(
        status="completed",
        output=TEXT,
        cost=2.5,
        sources=[{**sample(DeepResearchSource), "url": u, "title": t} for u, t in CITED],
    )
    state = valyu.ValyuDeepResearchApi(mode="fast").read_submit(
        wire(DeepResearchStatusResponse, document)
    )
    assert state.report.text == TEXT and pairs(state.report.citations) == CITED
    assert (state.report.cost_usd, state.report.cost_basis) == (2.5, "billed")


def test_valyu_every_sdk_status_has_a_phase():
    from valyu.types.deepresearch import DeepResearchStatus

    assert {s.value for s in DeepResearchStatus} <= set(valyu._PHASES)


# --- Exa (exa-py) ----------------------------------------------------------------------------


def _exa(fake):
    from exa_py import Exa

    return Exa(api_key=KEY, base_url=f"{fake.base_url}/exa")


def test_exa_agent_request_and_fake_against_the_sdk(fake):
    api = exa.ExaAgentApi(effort="high")
    client = _exa(fake)
    run = client.agent.runs.create(query=INSTRUCTION, effort="high")
    done = client.agent.runs.get(run.id)
    assert done.status == "completed" and done.output.text == DEFAULT_REPORT  # (c)
    client.agent.runs.list()

    ours = api.submit(f"{fake.base_url}/exa", KEY, INSTRUCTION)
    sdk_create, sdk_get, sdk_list = fake.requests_for("exa")
    assert_same_request(ours, sdk_create, "x-api-key")  # (a)
    state = api.read_submit(run.model_dump(mode="json", by_alias=True))
    assert api.poll("", KEY, state).url == sdk_get.path.removeprefix("/exa")
    assert api.preflight_probe("", KEY).request.url == sdk_list.path.removeprefix("/exa")


def test_exa_deep_reasoning_request_is_the_sdks_serialisation(fake):
    api = exa.ExaDeepReasoningApi()
    client = _exa(fake)
    response = client.search(
        INSTRUCTION,
        type="deep-reasoning",
        num_results=10,
        contents={"highlights": True},
        output_schema={"type": "text", "description": exa.OUTPUT_DESCRIPTION},
    )
    assert response.output.content == DEFAULT_REPORT  # (c)
    ours = api.submit(f"{fake.base_url}/exa", KEY, INSTRUCTION)
    (sdk_search,) = fake.requests_for("exa")
    assert_same_request(ours, sdk_search, "x-api-key")  # numResults, outputSchema
    assert "numResults" in body_of(sdk_search) and "num_results" not in ours.json_body


def test_exa_agent_parser_reads_a_full_sdk_run():
    from exa_py.agent.types import AgentGroundingCitation, AgentGroundingEntry, AgentRun

    document = sample(AgentRun)
    document["status"] = "completed"
    document["output"] = {
        **document["output"],
        "text": TEXT,
        "grounding": [
            {
                **sample(AgentGroundingEntry),
                "citations": [
                    {**sample(AgentGroundingCitation), "url": u, "title": t} for u, t in CITED
                ],
            }
        ],
    }
    document["costDollars"] = {**document["costDollars"], "total": 0.42}
    on_the_wire = AgentRun.model_validate(document).model_dump(mode="json", by_alias=True)
    assert "costDollars" in on_the_wire  # the REST casing, which the parser must read
    state = exa.ExaAgentApi(effort="low").read_submit(on_the_wire)
    assert state.report.text == TEXT and pairs(state.report.citations) == CITED
    assert (state.report.cost_usd, state.report.cost_basis) == (0.42, "billed")


def test_exa_every_sdk_agent_status_has_a_phase():
    from exa_py.agent.types import KnownAgentRunStatus

    assert set(get_args(KnownAgentRunStatus)) <= set(exa._PHASES)


# --- Parallel (parallel-web) -----------------------------------------------------------------


def test_parallel_request_and_fake_against_the_sdk(fake):
    from parallel import Parallel
    from parallel.types import task_run_create_params

    api = parallel.ParallelTaskApi(processor="core")
    client = Parallel(api_key=KEY, base_url=f"{fake.base_url}/parallel", max_retries=0)
    spec = {"output_schema": {"type": "text", "description": parallel.OUTPUT_DESCRIPTION}}
    run = client.task_run.create(input=INSTRUCTION, processor="core", task_spec=spec)
    polled = client.task_run.retrieve(run.run_id)
    result = client.task_run.result(run.run_id)
    assert polled.status == "completed" and result.output.content == DEFAULT_REPORT  # (c)

    ours = api.submit(f"{fake.base_url}/parallel", KEY, INSTRUCTION)
    sdk_create, sdk_get, sdk_result = fake.requests_for("parallel")
    assert_same_request(ours, sdk_create, "x-api-key")  # (a)
    typed_dict_check(task_run_create_params.TaskRunCreateParams, ours.json_body)
    state = api.read_submit(run.model_dump(mode="json"))
    assert api.poll("", KEY, state).url == sdk_get.path.removeprefix("/parallel")
    assert api.result("", KEY, state).url == sdk_result.path.removeprefix("/parallel")
    report = api.read_result(result.model_dump(mode="json"))
    assert pairs(report.citations) == DEFAULT


def test_parallel_parser_reads_full_sdk_models():
    from parallel.types import Citation, FieldBasis, TaskRun, TaskRunResult, TaskRunTextOutput

    run = wire(TaskRun, {**sample(TaskRun), "status": "running"})
    state = parallel.ParallelTaskApi(processor="core").read_submit(run)
    assert (state.phase, state.run_id) == ("running", run["run_id"])

    output = {
        **sample(TaskRunTextOutput),
        "content": TEXT,
        "basis": [
            {
                **sample(FieldBasis),
                "citations": [{**sample(Citation), "url": u, "title": t} for u, t in CITED],
            }
        ],
    }
    document = {**sample(TaskRunResult), "output": output}
    report = parallel.ParallelTaskApi(processor="core").read_result(wire(TaskRunResult, document))
    assert report.text == TEXT and pairs(report.citations) == CITED


def test_parallel_every_sdk_status_has_a_phase():
    from parallel.types import TaskRun

    assert set(get_args(TaskRun.model_fields["status"].annotation)) <= set(parallel._PHASES)


# --- Tavily (tavily-python) ------------------------------------------------------------------


def test_tavily_request_and_fake_against_the_sdk(fake):
    from tavily import TavilyClient

    api = tavily.TavilyResearchApi(model="pro")
    client = TavilyClient(api_key=KEY, api_base_url=f"{fake.base_url}/tavily")
    created = client.research(input=INSTRUCTION, model="pro", citation_format="numbered")
    done = client.get_research(created["request_id"])
    assert done["status"] == "completed" and done["content"] == DEFAULT_REPORT  # (c)

    ours = api.submit(f"{fake.base_url}/tavily", KEY, INSTRUCTION)
    sdk_create, sdk_get = fake.requests_for("tavily")
    assert_same_request(ours, sdk_create, "authorization", sdk_extra=frozenset({"stream"}))
    state = api.read_submit(created)
    assert api.poll("", KEY, state).url == sdk_get.path.removeprefix("/tavily")
    assert pairs(api.read_poll(done).report.citations) == DEFAULT


# --- You.com (youdotcom) ---------------------------------------------------------------------


def test_youcom_request_and_fake_against_the_sdk(fake):
    from youdotcom import You

    api = youcom.YouResearchApi()
    client = You(api_key_auth=KEY, server_url=f"{fake.base_url}/youcom")
    response = client.research(input=INSTRUCTION, research_effort="exhaustive")
    assert response.output.content == DEFAULT_REPORT  # (c)

    ours = api.submit(f"{fake.base_url}/youcom", KEY, INSTRUCTION)
    (sdk_research,) = fake.requests_for("youcom")
    # The SDK sends its default `background: false` (synchronous), which is what we want.
    assert_same_request(ours, sdk_research, "x-api-key", sdk_extra=frozenset({"background"}))
    assert body_of(sdk_research)["background"] is False


def test_youcom_preflight_probe_is_the_sdks_task_status_call(fake):
    # The probe polls a task id that cannot exist: the SDK's own `get_research_task`, whose
    # documented 404 is "task not found", sends exactly our request and reads the fake's 404.
    from youdotcom import You, errors

    client = You(api_key_auth=KEY, server_url=f"{fake.base_url}/youcom")
    with pytest.raises(errors.GetResearchTaskNotFoundError):
        client.get_research_task(task_id=PREFLIGHT_RUN_ID)
    (sdk_status,) = fake.requests_for("youcom")
    probe = youcom.YouResearchApi().preflight_probe(f"{fake.base_url}/youcom", KEY)
    assert_same_request(probe.request, sdk_status, "x-api-key")
    assert probe.ok_statuses == {404} and not probe.proves_key


def test_youcom_parser_reads_a_full_sdk_response():
    from youdotcom.models.researchresponse import Output, ResearchResponse, Source

    document = sample(ResearchResponse)
    document["output"] = {
        **sample(Output),
        "content": TEXT,
        "sources": [{**sample(Source), "url": u, "title": t} for u, t in CITED],
    }
    state = youcom.YouResearchApi().read_submit(wire(ResearchResponse, document))
    assert state.report.text == TEXT and pairs(state.report.citations) == CITED


# --- OpenAI (openai) -------------------------------------------------------------------------


def test_openai_request_and_fake_against_the_sdk(fake):
    from openai import OpenAI
    from openai.types.responses import response_create_params

    api = openai_responses.OpenAiResponsesApi(model="o3-deep-research", background=True)
    client = OpenAI(api_key=KEY, base_url=f"{fake.base_url}/openai/v1", max_retries=0)
    created = client.responses.create(
        model=api.model,
        input=INSTRUCTION,
        tools=[openai_responses.WEB_SEARCH_TOOL],
        background=True,
    )
    done = client.responses.retrieve(created.id)
    assert done.status == "completed" and done.output_text == DEFAULT_REPORT  # (c)
    client.models.retrieve(api.model)

    ours = api.submit(f"{fake.base_url}/openai", KEY, INSTRUCTION)
    sdk_create, sdk_get, sdk_model = fake.requests_for("openai")
    assert_same_request(ours, sdk_create, "authorization")  # (a)
    typed_dict_check(response_create_params.ResponseCreateParamsBase, ours.json_body)
    state = api.read_submit(created.model_dump(mode="json"))
    assert api.poll("", KEY, state).url == sdk_get.path.removeprefix("/openai")
    assert api.preflight_probe("", KEY).request.url == sdk_model.path.removeprefix("/openai")


def test_openai_parser_reads_a_full_sdk_response():
    from openai.types.responses import (
        Response,
        ResponseOutputMessage,
        ResponseOutputText,
    )
    from openai.types.responses.response_output_text import AnnotationURLCitation

    text_part = {
        **sample(ResponseOutputText),
        "text": TEXT,
        "annotations": [
            {**sample(AnnotationURLCitation), "type": "url_citation", "url": u, "title": t}
            for u, t in CITED
        ],
    }
    message = {**sample(ResponseOutputMessage), "type": "message", "content": [text_part]}
    document = {**sample(Response), "status": "completed", "output": [message]}
    model = Response.model_validate(document)
    state = openai_responses.OpenAiResponsesApi(model="gpt-5.5").read_submit(
        model.model_dump(mode="json")
    )
    assert state.report.text == model.output_text == TEXT
    assert pairs(state.report.citations) == CITED


def test_openai_every_sdk_status_has_a_phase():
    from openai.types.responses import Response

    statuses = {
        a for arg in get_args(Response.model_fields["status"].annotation) for a in get_args(arg)
    }
    assert statuses <= set(openai_responses._PHASES)


# --- the samples themselves ------------------------------------------------------------------


def test_samples_fill_every_field_the_sdk_model_defines():
    from google.genai._gaos.types.interactions.interaction import Interaction

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        document = sample(Interaction)
    deprecated = {n for n, f in Interaction.model_fields.items() if f.deprecated}
    assert set(document) == field_names(Interaction) - deprecated
    assert all(value is not None for value in document.values())


# --- default hosts -----------------------------------------------------------------------------


def _sdk_default_hosts() -> dict[str, str]:
    from exa_py import Exa
    from google import genai
    from nimble_python import Nimble
    from openai import OpenAI
    from parallel import Parallel
    from perplexity import Perplexity
    from tavily import TavilyClient
    from valyu import Valyu
    from youdotcom.sdkconfiguration import SERVERS

    return {
        "exa": Exa(api_key=KEY).base_url,
        "gemini": genai.Client(api_key=KEY)._api_client._http_options.base_url,
        "nimble": str(Nimble(api_key=KEY).base_url),
        "openai": str(OpenAI(api_key=KEY).base_url).removesuffix("/v1/"),
        "parallel": str(Parallel(api_key=KEY).base_url),
        "perplexity": str(Perplexity(api_key=KEY).base_url),
        "tavily": TavilyClient(api_key=KEY).base_url,
        "valyu": Valyu(api_key=KEY).base_url.removesuffix("/v1"),  # /v1 is in our paths
        "youcom": SERVERS[0],
    }


def test_our_hosts_are_the_sdks_default_hosts():
    ours = {m.PROVIDER: m.BASE_URL for m in MODULES}
    assert {p: h.rstrip("/") for p, h in _sdk_default_hosts().items()} == ours
