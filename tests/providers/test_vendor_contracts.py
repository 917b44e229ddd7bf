"""Our search clients held against the vendors' own SDKs (installed as dev dependencies, versions
recorded in each vendor module's SDK_CHECK and enforced by test_vendor_truth.py).

For every search lane whose vendor ships a Python SDK:

1. request: the SDK, called with the arguments that mean what our lane means and pointed at the
   loopback fake, sends the same method, path, auth header and JSON body as our client (fields
   the SDK adds on its own are listed per vendor, never silently ignored);
2. response: our normaliser reads a response built from the SDK's own response model with
   every field the model defines filled in, and the recorded examples in the SDK repositories;
   the fake's own responses validate against those models with no field the model lacks;
3. the SDK itself, pointed at our loopback fake, succeeds and parses the same results our
   normaliser produces, so the fake speaks the vendor's wire format, not ours.

Brave publishes no official Python SDK: its lane is checked against the documented examples in
test_search_clients.py only. The live extraction engines and the QA answer lanes are held to
their SDKs the same way in test_extraction_contracts.py and test_answer_contracts.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from collectors.products.chunks import SNIPPET_SEPARATOR
from collectors.search import LANES, SearchClient
from tests.fakes import FakeVendorServer
from tests.fakes.vendor_responses import search_response
from tests.providers.sdk_checks import model_fields, signature_params, typed_dict_check
from tests.providers.sdk_samples import sample

QUESTION = 'Who wrote "Hamlet"? (an ünïcode question)'
KEY = "sk-contract-7f3a9c1e-0000"

Triple = tuple[str, str, str]  # (url, title, chunk text) in rank order


# --- the SDK calls that mean what each lane means ------------------------------------------------


def _exa(search_type: str) -> Callable[[str, str, str, int], list[Triple]]:
    def call(base_url: str, key: str, query: str, n: int) -> list[Triple]:
        from exa_py import Exa

        response = Exa(api_key=key, base_url=base_url).search(
            query, type=search_type, num_results=n, contents={"summary": True}
        )
        return [(r.url, r.title, r.summary) for r in response.results]

    return call


def _tavily(depth: str) -> Callable[[str, str, str, int], list[Triple]]:
    def call(base_url: str, key: str, query: str, n: int) -> list[Triple]:
        from tavily import TavilyClient

        response = TavilyClient(api_key=key, api_base_url=base_url).search(
            query, search_depth=depth, max_results=n, include_answer=False
        )
        return [(r["url"], r["title"], r["content"]) for r in response["results"]]

    return call


def _parallel(mode: str) -> Callable[[str, str, str, int], list[Triple]]:
    def call(base_url: str, key: str, query: str, n: int) -> list[Triple]:
        from parallel import Parallel

        response = Parallel(api_key=key, base_url=base_url, max_retries=0).search(
            objective=query, search_queries=[query], mode=mode, advanced_settings={"max_results": n}
        )
        return [
            (r.url, r.title, SNIPPET_SEPARATOR.join(r.excerpts or [])) for r in response.results
        ]

    return call


def _firecrawl(base_url: str, key: str, query: str, n: int) -> list[Triple]:
    from firecrawl import Firecrawl

    response = Firecrawl(api_key=key, api_url=base_url, max_retries=0).search(
        query, limit=n, sources=["web"], timeout=55_000
    )
    return [(r.url, r.title, r.description) for r in response.web]


def _nimble(base_url: str, key: str, query: str, n: int) -> list[Triple]:
    from nimble_python import Nimble

    response = Nimble(api_key=key, base_url=base_url, max_retries=0).search(
        query=query, max_results=n, search_depth="standard", include_answer=False
    )
    return [(r.url, r.title, r.description or r.content) for r in response.results]


SDK_CALLS: dict[str, Callable[[str, str, str, int], list[Triple]]] = {
    "exa_search_auto": _exa("auto"),
    "exa_search_fast": _exa("fast"),
    "tavily_search_basic": _tavily("basic"),
    "tavily_search_fast": _tavily("fast"),
    "parallel_search_basic": _parallel("basic"),
    "parallel_search_turbo": _parallel("turbo"),
    "firecrawl_search": _firecrawl,
    "nimble_search": _nimble,
}
# Body fields an SDK adds on its own (telemetry), which our client deliberately leaves out.
SDK_ONLY_FIELDS = {"firecrawl": {"origin"}}
# firecrawl-py joins "/v2/search" to the host and drops the base URL's path: serve it at the root.
ROOT_PROVIDERS = {"firecrawl"}


def test_every_lane_but_brave_is_bound_to_its_sdk():
    assert set(LANES) - set(SDK_CALLS) == {"brave_search"}


def _our_call(lane: str, base_url: str) -> list[Triple]:
    spec = LANES[lane]

    async def scenario():
        async with SearchClient(
            [lane], base_urls={spec.provider: base_url}, environ={spec.key_env: KEY}
        ) as search:
            return await search.search(lane, QUESTION, item_id="contract")

    result = asyncio.run(scenario())
    assert result.outcome.completed, result.outcome.payload
    return [(c.url, c.title, c.text) for c in result.value]


@pytest.mark.parametrize("lane", sorted(SDK_CALLS))
def test_our_request_is_the_sdks_request_and_the_sdk_reads_our_fake(lane):
    spec = LANES[lane]
    root = spec.provider in ROOT_PROVIDERS
    with FakeVendorServer(root_provider=spec.provider if root else None) as fake:
        base_url = fake.base_url if root else fake.base_url_for(spec.provider)
        ours = _our_call(lane, base_url)
        theirs = SDK_CALLS[lane](base_url, KEY, QUESTION, spec.max_results)
        our_request, sdk_request = fake.requests
    # 1. the request
    assert our_request.method == sdk_request.method and our_request.path == sdk_request.path
    auth = {"x-api-key", "authorization"} & set(sdk_request.headers)
    assert auth and all(our_request.headers[h] == sdk_request.headers[h] for h in auth)
    sdk_body = sdk_request.json()
    extra = SDK_ONLY_FIELDS.get(spec.provider, set())
    assert set(sdk_body) >= extra
    assert our_request.json() == {k: v for k, v in sdk_body.items() if k not in extra}
    # 3. the SDK parsed the fake's answer into exactly what our normaliser read from it
    assert len(ours) == spec.max_results and theirs == ours


# --- responses built from the SDKs' own models -------------------------------------------------


def _exa_model_response() -> dict[str, Any]:
    from exa_py.api import ResultWithSummary, SearchResponse, to_camel_case

    response = sample(SearchResponse)  # generic in T: its results are set below
    response.results = [sample(ResultWithSummary, f"results[{i}]") for i in range(2)]
    # The SDK reads the wire body through to_snake_case: the wire is its camelCase inverse.
    return to_camel_case(dataclasses.asdict(response))


def _model_dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True)


def _parallel_model_response() -> dict[str, Any]:
    from parallel.types.search_result import SearchResult

    return _model_dump(sample(SearchResult))


def _nimble_model_response() -> dict[str, Any]:
    from nimble_python.types.search_response import SearchResponse

    return _model_dump(sample(SearchResponse))


def _firecrawl_model_response() -> dict[str, Any]:
    from firecrawl.v2.types import SearchData

    # v2 REST: {"success": true, "data": {"web": [...]}}; the SDK's `search` reads exactly that.
    return {"success": True, "data": _model_dump(sample(SearchData))}


def _expected_from_model(provider: str, body: dict[str, Any]) -> list[Triple]:
    """What each SDK model's fields mean as a chunk, read off the SDK-shaped body."""
    if provider == "exa":
        return [(r["url"], r["title"], r["summary"]) for r in body["results"]]
    if provider == "parallel":
        return [
            (r["url"], r["title"], SNIPPET_SEPARATOR.join(r["excerpts"])) for r in body["results"]
        ]
    if provider == "nimble":
        return [(r["url"], r["title"], r["description"]) for r in body["results"]]
    if provider == "firecrawl":
        return [(r["url"], r["title"], r["description"]) for r in body["data"]["web"]]
    raise KeyError(provider)


MODEL_RESPONSES = {
    "exa": _exa_model_response,
    "parallel": _parallel_model_response,
    "nimble": _nimble_model_response,
    "firecrawl": _firecrawl_model_response,
}
LANE_OF = {"exa": "exa_search_auto", "parallel": "parallel_search_basic"} | {
    p: next(lane for lane, s in LANES.items() if s.provider == p) for p in ("nimble", "firecrawl")
}


@pytest.mark.parametrize("provider", sorted(MODEL_RESPONSES))
def test_normalizer_reads_a_response_built_from_the_sdk_model(provider):
    body = MODEL_RESPONSES[provider]()
    spec = LANES[LANE_OF[provider]]
    chunks = spec.normalize_raw(json.dumps(body))
    expected = _expected_from_model(provider, body)
    assert len(expected) == 2
    assert [(c.url, c.title, c.text) for c in chunks] == expected
    assert [c.rank for c in chunks] == [1, 2]
    if spec.body_failure is not None:
        assert spec.body_failure(body) is None


def test_vendor_request_ids_come_from_the_sdk_models_fields():
    exa, parallel, nimble = (MODEL_RESPONSES[p]() for p in ("exa", "parallel", "nimble"))
    # exa-py's SearchResponse carries no request id; the REST body does (exa-py's conformance
    # fixture for POST /search has "requestId"), so ours reads it when present.
    assert LANES["exa_search_auto"].vendor_request_id({}, {"requestId": "r-1"}) == "r-1"
    assert LANES["parallel_search_basic"].vendor_request_id({}, parallel) == parallel["search_id"]
    assert LANES["nimble_search"].vendor_request_id({}, nimble) == nimble["request_id"]
    assert "requestId" not in exa


# Recorded examples from the SDK repositories (the same fields and types, values our own):
# exa-labs/exa-py tests/conformance/fixtures/responses.json ("POST /search", commit f019ea0b),
# tavily-ai/tavily-python tests/test_search.py (`dummy_response`, commit 1aeb9db6).
RECORDED = {
    "exa_search_auto": {
        "costDollars": {"total": 0.005},
        "requestId": "request-7",
        "results": [
            {
                "author": "Jane Doe",
                "id": "result-7",
                "publishedDate": "2024-05-01T00:00:00Z",
                "score": 0.42,
                "text": "Full text, not requested by our lane.",
                "title": "Hamlet",
                "url": "https://example.org/hamlet",
            }
        ],
    },
    "tavily_search_basic": {
        "query": QUESTION,
        "follow_up_questions": None,
        "answer": None,
        "images": [],
        "results": [
            {
                "title": "Hamlet - play by Shakespeare",
                "url": "https://example.org/hamlet",
                "content": "Hamlet is a tragedy written by William Shakespeare.",
                "score": 0.97,
                "raw_content": None,
            }
        ],
        "response_time": 1.2,
    },
}
RECORDED_CHUNKS = {
    # No summary was requested in the recorded call: the result keeps its rank with no text.
    "exa_search_auto": [("https://example.org/hamlet", "Hamlet", "")],
    "tavily_search_basic": [
        (
            "https://example.org/hamlet",
            "Hamlet - play by Shakespeare",
            "Hamlet is a tragedy written by William Shakespeare.",
        )
    ],
}


@pytest.mark.parametrize("lane", sorted(RECORDED))
def test_normalizer_reads_the_recorded_sdk_examples(lane):
    chunks = LANES[lane].normalize_raw(json.dumps(RECORDED[lane]))
    assert [(c.url, c.title, c.text) for c in chunks] == RECORDED_CHUNKS[lane]
    assert LANES[lane].vendor_request_id({}, RECORDED[lane]) == RECORDED[lane].get("requestId")


# --- the fake answers only with what the SDK models define ---------------------------------------


def _exa_fields() -> tuple[set[str], set[str]]:
    from exa_py.api import ResultWithSummary, SearchResponse, snake_to_camel

    top = {snake_to_camel(f.name) for f in dataclasses.fields(SearchResponse)}
    result = {snake_to_camel(f.name) for f in dataclasses.fields(ResultWithSummary)}
    return top | {"requestId"}, result  # requestId: in the SDK repo's recorded REST body


def _stainless_fields(top: type[BaseModel], result: type[BaseModel]):
    return model_fields(top), model_fields(result)


def _fields(provider: str) -> tuple[set[str], set[str]]:
    if provider == "exa":
        return _exa_fields()
    if provider == "parallel":
        from parallel.types.search_result import SearchResult
        from parallel.types.web_search_result import WebSearchResult

        return _stainless_fields(SearchResult, WebSearchResult)
    if provider == "nimble":
        from nimble_python.types.search_response import Result, SearchResponse

        return _stainless_fields(SearchResponse, Result)
    if provider == "firecrawl":
        from firecrawl.v2.types import SearchResponse, SearchResultWeb

        return model_fields(SearchResponse), model_fields(SearchResultWeb)
    raise KeyError(provider)


@pytest.mark.parametrize("provider", ["exa", "parallel", "nimble", "firecrawl"])
def test_the_fakes_responses_validate_against_the_sdk_models(provider):
    body = search_response(provider, QUESTION, 3)
    top_fields, result_fields = _fields(provider)
    assert set(body) <= top_fields, set(body) - top_fields
    results = body["data"]["web"] if provider == "firecrawl" else body["results"]
    for result in results:
        assert set(result) <= result_fields, set(result) - result_fields
    if provider == "parallel":
        from parallel.types.search_result import SearchResult

        SearchResult.model_validate(body)
    if provider == "nimble":
        from nimble_python.types.search_response import SearchResponse

        SearchResponse.model_validate(body)
    if provider == "firecrawl":
        from firecrawl.v2.types import SearchResultWeb

        [SearchResultWeb.model_validate(r) for r in results]


# --- our request bodies validate against the SDKs' own request types -----------------------------


def _our_body(lane: str) -> dict[str, Any]:
    spec = LANES[lane]
    return spec.build_request(spec.base_url, KEY, QUESTION, spec.max_results).json_body


@pytest.mark.parametrize("lane", ["parallel_search_basic", "parallel_search_turbo"])
def test_parallel_body_validates_against_client_search_params(lane):
    from parallel.types.client_search_params import ClientSearchParams

    typed_dict_check(ClientSearchParams, _our_body(lane))


def test_nimble_body_validates_against_client_search_params():
    from nimble_python.types.client_search_params import ClientSearchParams

    typed_dict_check(ClientSearchParams, _our_body("nimble_search"))


def test_firecrawl_body_validates_against_search_request():
    from firecrawl.v2.methods.search import _validate_search_request
    from firecrawl.v2.types import SearchRequest

    body = _our_body("firecrawl_search")
    request = SearchRequest.model_validate(body)
    _validate_search_request(request)  # the SDK's own limits (limit <= 100, timeout <= 300 s)
    assert set(body) <= set(request.model_fields_set)


@pytest.mark.parametrize("lane", ["exa_search_auto", "exa_search_fast"])
def test_exa_body_validates_against_the_sdks_search_options(lane):
    from exa_py.api import SEARCH_OPTIONS_TYPES, SearchType, to_snake_case, validate_search_options

    body = _our_body(lane)
    options = to_snake_case(body)  # the SDK validates snake_case options, then camelCases them
    validate_search_options(options, SEARCH_OPTIONS_TYPES)
    assert body["type"] in typing_args(SearchType)


def typing_args(alias: Any) -> tuple:
    import typing

    return typing.get_args(alias)


@pytest.mark.parametrize("lane", ["tavily_search_basic", "tavily_search_fast"])
def test_tavily_body_uses_the_sdks_parameter_names_and_values(lane):
    from tavily import TavilyClient

    # tavily-python has no request TypedDict: `TavilyClient.search`'s annotated parameters are
    # its request type, so they become one and our body is validated against it, strictly.
    typed_dict_check(signature_params(TavilyClient.search), _our_body(lane))
