"""The QA answer lanes (a vendor's own answer product) held against the vendors' own SDKs, as
test_vendor_contracts.py holds the search lanes:

1. request: our body validates against the SDK's own request type (exa-py's `Exa.answer`
   and tavily-python's `TavilyClient.search` signatures, nimble-python's ClientSearchParams,
   parallel-web's TaskRunCreateParams), and the SDK, called with the arguments that mean what
   our lane means and pointed at the loopback answer fake, sends the same body (fields it adds
   on its own are listed) and, for Parallel, waits for the result the way our lane does;
2. the SDK parses the fake's answer into the answer and cited URLs our lane reads from it;
3. response: our lane reads the answer and citations of a response built from the SDK's own
   response model (exa-py AnswerResponse, nimble-python SearchResponse, parallel-web
   TaskRunResult) with every field set.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from collectors.qa.answer_lanes import ANSWER_LANES, answer_lanes
from tests.fakes.answer_fake import AnswerProductsFake
from tests.providers.sdk_checks import signature_params, typed_dict_check
from tests.providers.sdk_samples import sample
from warehouse.events import CallTimings, ProviderCallCompleted, RecordedRequest

QUESTION = 'Who wrote "Hamlet"? (an ünïcode question)'
KEYS = {
    "EXA_API_KEY": "k-exa",
    "TAVILY_API_KEY": "k-tav",
    "NIMBLE_API_KEY": "k-nim",
    "PARALLEL_API_KEY": "k-par",
}
Answer = tuple[str | None, list[str]]  # (the vendor's answer, its cited URLs in order)


def _our_body(lane: str) -> dict[str, Any]:
    return ANSWER_LANES[lane].body(QUESTION)


# --- 1. our request bodies validate against the SDKs' own request types --------------------------


def test_exa_answer_body_validates_against_the_answer_signature():
    from exa_py import Exa
    from exa_py.api import to_snake_case

    # exa-py camelCases `Exa.answer`'s keyword arguments into the body: those are its type.
    typed_dict_check(signature_params(Exa.answer), to_snake_case(_our_body("exa_answer")))


def test_tavily_answer_body_validates_against_the_search_signature():
    from tavily import TavilyClient

    body = _our_body("tavily_answer")
    typed_dict_check(signature_params(TavilyClient.search), body)
    assert body["include_answer"] is True  # a literal "basic"/"advanced" would also type-check


def test_nimble_answer_body_validates_against_client_search_params():
    from nimble_python.types.client_search_params import ClientSearchParams

    typed_dict_check(ClientSearchParams, _our_body("nimble_answer"))


def test_parallel_answer_body_validates_against_task_run_create_params():
    from parallel.types.task_run_create_params import TaskRunCreateParams
    from parallel.types.task_spec_param import TaskSpecParam
    from parallel.types.text_schema_param import TextSchemaParam

    body = _our_body("parallel_answer")
    typed_dict_check(TaskRunCreateParams, body)
    typed_dict_check(TaskSpecParam, body["task_spec"])
    typed_dict_check(TextSchemaParam, body["task_spec"]["output_schema"])
    assert body["input"] == QUESTION  # the question alone, as every answer lane sends it


def test_every_answer_lane_has_a_request_type_check():
    checked = {"exa_answer", "tavily_answer", "nimble_answer", "parallel_answer"}
    assert set(ANSWER_LANES) == checked == set(SDK_CALLS)


# --- 2. the SDK pointed at the answer fake ---------------------------------------------------------


def _exa(base_url: str) -> Answer:
    from exa_py import Exa

    response = Exa(api_key=KEYS["EXA_API_KEY"], base_url=base_url).answer(QUESTION, text=True)
    return response.answer or None, [c.url for c in response.citations]


def _tavily(base_url: str) -> Answer:
    from tavily import TavilyClient

    client = TavilyClient(api_key=KEYS["TAVILY_API_KEY"], api_base_url=base_url)
    response = client.search(QUESTION, include_answer=True, max_results=10)
    return response["answer"], [r["url"] for r in response["results"]]


def _nimble(base_url: str) -> Answer:
    from nimble_python import Nimble

    client = Nimble(api_key=KEYS["NIMBLE_API_KEY"], base_url=base_url, max_retries=0)
    response = client.search(query=QUESTION, include_answer=True, max_results=10)
    cited = sorted(response.answer_citations or [], key=lambda c: c.marker)
    return response.answer, [response.results[c.result_index].url for c in cited]


def _parallel(base_url: str) -> Answer:
    from parallel import Parallel

    from collectors.vendors.parallel.answer import ANSWER_PROCESSOR, ANSWER_WAIT_S

    client = Parallel(api_key=KEYS["PARALLEL_API_KEY"], base_url=base_url, max_retries=0)
    # `execute` cannot send a text schema without a description (its helper insists on one):
    # its two calls, create then result(api_timeout), are what it does and what our lane does.
    run = client.task_run.create(
        input=QUESTION, processor=ANSWER_PROCESSOR, task_spec={"output_schema": {"type": "text"}}
    )
    result = client.task_run.result(run.run_id, api_timeout=ANSWER_WAIT_S)
    cited = [c.url for basis in result.output.basis for c in basis.citations or []]
    return result.output.content or None, cited


SDK_CALLS: dict[str, Callable[[str], Answer]] = {
    "exa_answer": _exa,
    "tavily_answer": _tavily,
    "nimble_answer": _nimble,
    "parallel_answer": _parallel,
}
SDK_ONLY_FIELDS = {"exa": {"stream"}}  # exa-py always sends `stream: false`


def _our_answer(lane: str, base_urls: dict[str, str]) -> Answer:
    (ours,) = answer_lanes([lane], environ=KEYS, base_urls=base_urls)

    async def scenario():
        async with ours.resource:
            return await ours.search(QUESTION, item_id="contract", attempt=1)

    found = asyncio.run(scenario())
    call = found[-1] if isinstance(found, tuple) else found  # the submit comes first
    assert isinstance(call, ProviderCallCompleted), call
    _outcome, answer = ours.own_answer(call)
    return answer, [chunk.url for chunk in ours.normalize(call)]


@pytest.mark.parametrize("answered", [True, False])
@pytest.mark.parametrize("lane", sorted(SDK_CALLS))
def test_our_request_is_the_sdks_request_and_the_sdk_reads_our_fake(lane, answered):
    spec = ANSWER_LANES[lane]
    # the fake answers a question it knows (gold answer, its source cited), else a wrong or no answer
    knowledge = {QUESTION: "William Shakespeare"} if answered else {}
    with AnswerProductsFake(knowledge, skill={spec.provider: 1.0 if answered else 0.0}) as fake:
        ours = _our_answer(lane, fake.base_urls())
        theirs = SDK_CALLS[lane](fake.base_urls()[spec.provider])
        (_, our_body), (vendor, sdk_body) = fake.requests
    assert vendor == spec.provider
    extra = SDK_ONLY_FIELDS.get(spec.provider, set())
    assert set(sdk_body) >= extra
    assert our_body == {k: v for k, v in sdk_body.items() if k not in extra}
    assert theirs == ours
    assert (ours[0] == "William Shakespeare") is answered
    if spec.result is not None:  # both waited for their run the same way (`?timeout=`)
        our_run, sdk_run = fake.runs.values()
        assert our_run.result_calls == sdk_run.result_calls == [{"timeout": ["120"]}]


# --- 3. responses built from the SDKs' own models --------------------------------------------------


def _stored(lane: str, body: dict[str, Any]) -> ProviderCallCompleted:
    spec = ANSWER_LANES[lane]
    return ProviderCallCompleted(
        lane=lane,
        provider=spec.provider,
        stage="search",
        item_id="i",
        attempt=1,
        request=RecordedRequest(method="POST", url=spec.base_url + spec.path, body={}),
        status_code=200,
        raw_body=json.dumps(body),
        timings=CallTimings(queue_wait_ms=0.0, round_trip_ms=1.0, whole_call_ms=1.0),
        http_attempts=1,
        concurrency=1,
    )


def _lane(lane: str):
    (built,) = answer_lanes([lane], environ=KEYS)
    return built


def test_exa_lane_reads_a_response_built_from_the_sdks_answer_response():
    from exa_py.api import AnswerResponse, AnswerResult, to_camel_case

    response = AnswerResponse(
        answer="answer-text",
        citations=[sample(AnswerResult, f"citations[{i}]") for i in range(2)],
    )
    body = to_camel_case(dataclasses.asdict(response))
    lane = _lane("exa_answer")
    call = _stored("exa_answer", body)
    assert lane.own_answer(call) == ("answered", "answer-text")
    chunks = lane.normalize(call)
    assert [(c.rank, c.url, c.title, c.text) for c in chunks] == [
        (i + 1, c.url, c.title, c.text) for i, c in enumerate(response.citations)
    ]


def test_nimble_lane_reads_citations_of_a_response_built_from_the_sdks_search_response():
    from nimble_python.types.search_response import AnswerCitation, SearchResponse

    response = sample(SearchResponse)
    # markers out of result order, one result cited twice: cited in marker order, once each
    response.answer_citations = [
        AnswerCitation(marker=2, result_index=0),
        AnswerCitation(marker=1, result_index=1),
        AnswerCitation(marker=3, result_index=1),
    ]
    body = response.model_dump(mode="json", by_alias=True)
    lane = _lane("nimble_answer")
    call = _stored("nimble_answer", body)
    assert lane.own_answer(call) == ("answered", response.answer)
    second, first = response.results[1], response.results[0]
    assert [(c.url, c.title, c.text) for c in lane.normalize(call)] == [
        (second.url, second.title, second.description),
        (first.url, first.title, first.description),
    ]


def test_parallel_lane_reads_a_response_built_from_the_sdks_task_run_result():
    from parallel.types import Citation, FieldBasis, TaskRunResult, TaskRunTextOutput

    cited = [("https://a.example/1", "A", ["a1", "a2"]), ("https://b.example/2", "B", None)]
    output = sample(TaskRunTextOutput)
    output.content = "answer-text"
    output.basis = [
        FieldBasis(field="output", reasoning="r", citations=[sample(Citation)]),
        FieldBasis(
            field="output",
            reasoning="r",
            citations=[Citation(url=u, title=t, excerpts=e) for u, t, e in cited],
        ),
    ]
    response = sample(TaskRunResult)
    response.output = output
    body = response.model_dump(mode="json", by_alias=True)
    lane = _lane("parallel_answer")
    call = _stored("parallel_answer", body)
    assert lane.own_answer(call) == ("answered", "answer-text")
    first = output.basis[0].citations[0]
    assert [(c.rank, c.url, c.title, c.text) for c in lane.normalize(call)] == [
        (1, first.url, first.title, "\n".join(first.excerpts)),
        (2, "https://a.example/1", "A", "a1\na2"),
        (3, "https://b.example/2", "B", ""),
    ]


def test_parallel_lane_refuses_a_result_that_is_not_a_text_answer():
    """An empty text is the vendor declining (a landed miss); a JSON output or no output is not
    the shape the lane asked for: a malformed body, never a disguised refusal."""
    from parallel.types import TaskRunJsonOutput, TaskRunResult

    lane = _lane("parallel_answer")
    empty = sample(TaskRunResult).model_dump(mode="json", by_alias=True)
    empty["output"]["content"] = ""
    assert lane.own_answer(_stored("parallel_answer", empty)) == ("refused", None)
    as_json = sample(TaskRunResult)
    as_json.output = sample(TaskRunJsonOutput)
    for body in (as_json.model_dump(mode="json", by_alias=True), {"run": empty["run"]}):
        with pytest.raises(ValueError, match=r"expected text at output\.content"):
            lane.normalize(_stored("parallel_answer", body))
