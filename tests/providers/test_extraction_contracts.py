"""Our live extraction engines held against the vendors' own SDKs, as test_vendor_contracts.py
holds the search lanes (same SDK pins, enforced by test_vendor_truth.py):

1. request: the SDK, called with the arguments that mean what our engine means and pointed at
   the loopback fake, sends the same path, auth header and JSON body as our engine (fields the
   SDK adds on its own are listed per vendor, never silently ignored), and our body validates
   against the SDK's own request type;
2. the SDK itself parses the fake's answer (a real page of the article-extraction benchmark,
   served by the loopback site, and a 404 page) into exactly what our `read` takes from it:
   the fake speaks the vendor's wire format, not ours;
3. response: our `read` takes the text, final URL and target status from a response built from
   the SDK's own response model with every field filled in (Tavily has no response model: its
   SDK repository's recorded example instead).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from collectors.extraction.live.engines import VENDOR_ENGINES, VendorClient
from collectors.extraction.live.loopback_site import LoopbackSite
from collectors.vendors.exa import extract as exa
from collectors.vendors.firecrawl import extract as firecrawl
from collectors.vendors.nimble import extract as nimble
from collectors.vendors.parallel import extract as parallel
from collectors.vendors.tavily import extract as tavily
from tests.fakes.extraction_fakes import FakeExtractionVendors
from tests.providers.sdk_checks import model_fields, signature_params, typed_dict_check
from tests.providers.sdk_samples import sample

Read = tuple[str | None, str | None, int | None]  # (text, final URL, the target's status)
RENDER = "fast"  # the render route our engines are called with below (Nimble: render false)


@dataclasses.dataclass(frozen=True)
class Live:
    fakes: FakeExtractionVendors
    urls: dict[str, str]  # page kind -> its URL on the loopback site
    article_body: str  # the article page's ground truth (the benchmark's articleBody)


@pytest.fixture(scope="module")
def live(shared_data):
    benchmark = shared_data / "article-extraction-benchmark"
    with LoopbackSite(benchmark, articles=1) as site, FakeExtractionVendors(site) as fakes:
        pages = {page.kind: page for page in site.pages}
        article = pages["article"]
        yield Live(
            fakes,
            {"article": site.url(article), "not_found": site.url(pages["not_found"])},
            article_body=site.truth[article.item_id]["articleBody"],
        )


# --- the SDK calls that mean what each engine means ----------------------------------------------


def _nimble(fakes: FakeExtractionVendors, url: str) -> Read:
    from nimble_python import Nimble

    key = fakes.environ()[nimble.KEY_ENV]
    client = Nimble(api_key=key, base_url=fakes.base_urls()["nimble"], max_retries=0)
    response = client.extract.run(url=url, render=False, formats=["markdown"])
    status = int(response.status_code) if response.status_code is not None else None
    return response.data.markdown, response.url, status


def _firecrawl(fakes: FakeExtractionVendors, url: str) -> Read:
    from firecrawl import Firecrawl
    from firecrawl.v2.utils.error_handler import FirecrawlError

    key = fakes.environ()[firecrawl.KEY_ENV]
    client = Firecrawl(api_key=key, api_url=fakes.root_url, max_retries=0)
    try:
        document = client.scrape(
            url, formats=["markdown"], only_main_content=True, max_age=0, timeout=30_000
        )
    except FirecrawlError:  # `success: false`: the SDK raises, our engine records no text
        return None, None, None
    metadata = document.metadata
    return document.markdown, metadata.url or metadata.source_url, metadata.status_code


def _exa(fakes: FakeExtractionVendors, url: str) -> Read:
    from exa_py import Exa

    key = fakes.environ()[exa.KEY_ENV]
    response = Exa(api_key=key, base_url=fakes.base_urls()["exa"]).get_contents(
        [url], text={"max_characters": exa.MAX_CHARACTERS}, max_age_hours=0
    )
    (status,) = response.statuses
    if status.status == "error":
        return None, None, status.error.http_status_code
    (result,) = response.results
    return result.text, result.url, None


def _tavily(depth: str) -> Callable[[FakeExtractionVendors, str], Read]:
    def call(fakes: FakeExtractionVendors, url: str) -> Read:
        from tavily import TavilyClient

        key = fakes.environ()[tavily.KEY_ENV]
        response = TavilyClient(api_key=key, api_base_url=fakes.base_urls()["tavily"]).extract(
            [url], extract_depth=depth, format="markdown", include_usage=True
        )
        if not response["results"]:
            return None, None, None
        (result,) = response["results"]
        return result["raw_content"], result["url"], None

    return call


def _parallel(fakes: FakeExtractionVendors, url: str) -> Read:
    from parallel import Parallel

    key = fakes.environ()[parallel.KEY_ENV]
    client = Parallel(api_key=key, base_url=fakes.base_urls()["parallel"], max_retries=0)
    response = client.extract(
        urls=[url],
        advanced_settings={
            "full_content": True,
            "fetch_policy": {"max_age_seconds": 600, "disable_cache_fallback": True},
        },
    )
    if not response.results:
        (error,) = response.errors
        return None, None, error.http_status_code
    (result,) = response.results
    return result.full_content, result.url, None


SDK_CALLS: dict[str, Callable[[FakeExtractionVendors, str], Read]] = {
    "nimble_extract": _nimble,
    "firecrawl_scrape": _firecrawl,
    "exa_contents": _exa,
    "tavily_extract_basic": _tavily("basic"),
    "tavily_extract_advanced": _tavily("advanced"),
    "parallel_extract": _parallel,
}
# Body fields an SDK adds on its own. firecrawl-py sends its ScrapeOptions defaults and a
# telemetry `origin` on every call; our engine leaves those options to the API's own defaults,
# which we have not confirmed equal the SDK's (an older API reference gives skipTlsVerification
# false): a known difference from an SDK user's request, listed, not hidden. tavily-python
# sends its client-side `timeout` (30 s) in the body.
SDK_ONLY_FIELDS = {
    "firecrawl": {
        "origin",
        "skipTlsVerification",
        "removeBase64Images",
        "fastMode",
        "blockAds",
        "storeInCache",
        "mobile",
    },
    "tavily": {"timeout"},
}
AUTH_HEADER = {
    "nimble": "authorization",
    "firecrawl": "authorization",
    "exa": "x-api-key",
    "tavily": "authorization",
    "parallel": "x-api-key",
}


def test_every_vendor_engine_is_bound_to_its_sdk():
    assert set(SDK_CALLS) == set(VENDOR_ENGINES)


def _our_read(fakes: FakeExtractionVendors, name: str, url: str) -> Read:
    async def scenario():
        async with VendorClient(
            [VENDOR_ENGINES[name]], base_urls=fakes.base_urls(), environ=fakes.environ()
        ) as client:
            return await client.extract(name, url, RENDER, item_id="contract", attempt=1)

    result = asyncio.run(scenario())
    assert result.completed, result.payload
    read = result.value
    return read.text, read.final_url, read.target_status_code


def _path(request: dict[str, Any]) -> str:
    return request["path"].removeprefix("/firecrawl")  # the SDK is served at the fake's root


@pytest.mark.parametrize("page", ["article", "not_found"])
@pytest.mark.parametrize("name", sorted(SDK_CALLS))
def test_our_request_is_the_sdks_request_and_the_sdk_reads_our_fake(live, name, page):
    fakes, urls = live.fakes, live.urls
    provider = VENDOR_ENGINES[name].provider
    fakes.requests.clear()
    ours = _our_read(fakes, name, urls[page])
    theirs = SDK_CALLS[name](fakes, urls[page])
    our_request, sdk_request = fakes.requests
    # 1. the request
    assert _path(our_request) == _path(sdk_request)
    header = AUTH_HEADER[provider]
    lower = [{k.lower(): v for k, v in r["headers"].items()} for r in (our_request, sdk_request)]
    assert lower[0][header] == lower[1][header]
    extra = SDK_ONLY_FIELDS.get(provider, set())
    assert set(sdk_request["body"]) >= extra
    assert our_request["body"] == {k: v for k, v in sdk_request["body"].items() if k not in extra}
    # 2. the SDK parsed the fake's answer into what our engine read from it
    assert theirs == ours
    if page == "article":
        opening = " ".join(live.article_body.split()[:8])  # the article's text, not a shell
        assert ours[0] and opening in " ".join(ours[0].split())
    else:  # no text, or (Firecrawl, Nimble) the 404 page's own text with the target's status
        assert ours[0] is None or ours[2] == 404


# --- our request bodies validate against the SDKs' own request types -----------------------------


def _our_body(name: str, url: str = "https://example.org/story") -> dict[str, Any]:
    engine = VENDOR_ENGINES[name]
    return engine.build_request(engine.module.BASE_URL, "key", url, RENDER).json_body


def test_nimble_body_validates_against_extract_run_params():
    from nimble_python.types.extract_run_params import ExtractRunParams

    for render in ("fast", "full", "auto"):
        body = nimble.build_request(nimble.BASE_URL, "key", "https://example.org/", render)
        typed_dict_check(ExtractRunParams, body.json_body)


def test_parallel_body_validates_against_client_extract_params():
    from parallel.types.client_extract_params import ClientExtractParams

    typed_dict_check(ClientExtractParams, _our_body("parallel_extract"))


def test_firecrawl_body_validates_against_scrape_options():
    from firecrawl.v2.types import ScrapeOptions
    from firecrawl.v2.utils import validate_scrape_options

    body = _our_body("firecrawl_scrape")
    # ScrapeOptions is snake_case in Python and camelCase on the wire (the SDK's own aliases).
    camel = {_camel(name): name for name in ScrapeOptions.model_fields}
    assert set(body) - {"url"} <= set(camel), set(body) - {"url"} - set(camel)
    options = ScrapeOptions.model_validate({camel[k]: v for k, v in body.items() if k != "url"})
    validate_scrape_options(options)  # the SDK's own limits (timeout, formats)


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


def test_exa_body_validates_against_the_sdks_contents_options():
    from exa_py.api import CONTENTS_OPTIONS_TYPES, to_snake_case, validate_search_options

    body = _our_body("exa_contents")
    options = to_snake_case(body)  # the SDK validates snake_case options, then camelCases them
    validate_search_options(options, CONTENTS_OPTIONS_TYPES)
    assert set(options["text"]) <= set(typing_keys("TextContentsOptions"))


def typing_keys(name: str) -> set[str]:
    import exa_py.api

    return set(getattr(exa_py.api, name).__annotations__)


@pytest.mark.parametrize("name", ["tavily_extract_basic", "tavily_extract_advanced"])
def test_tavily_body_uses_the_sdks_extract_parameter_names_and_values(name):
    from tavily import TavilyClient

    # tavily-python has no request type: `TavilyClient.extract`'s annotated parameters are one.
    typed_dict_check(signature_params(TavilyClient.extract), _our_body(name))


# --- responses built from the SDKs' own models -------------------------------------------------


def _nimble_model() -> tuple[dict[str, Any], str, Read]:
    from nimble_python.types.extract_run_response import ExtractRunResponse

    response = sample(ExtractRunResponse).model_dump(mode="json", by_alias=True)
    expected = (response["data"]["markdown"], response["url"], int(response["status_code"]))
    return response, response["url"], expected


def _parallel_model() -> tuple[dict[str, Any], str, Read]:
    from parallel.types.extract_response import ExtractResponse

    response = sample(ExtractResponse).model_dump(mode="json", by_alias=True)
    first = response["results"][0]
    return response, first["url"], (first["full_content"], first["url"], None)


def _exa_model() -> tuple[dict[str, Any], str, Read]:
    from exa_py.api import ContentStatus, ResultWithText, SearchResponse, _parse_content_status

    response = sample(SearchResponse)
    response.results = [sample(ResultWithText, f"results[{i}]") for i in range(2)]
    response.statuses = [
        ContentStatus(id=result.url, status="success", source="livecrawl")
        for result in response.results
    ]
    body = {
        "results": [dataclasses.asdict(r) for r in response.results],
        "statuses": [
            {"id": s.id, "status": s.status, "source": s.source} for s in response.statuses
        ],
    }
    # The wire statuses are what the SDK's own parser turns back into these ContentStatus.
    assert [_parse_content_status(s) for s in body["statuses"]] == response.statuses
    first = response.results[0]
    return body, first.url, (first.text, first.url, None)


def _firecrawl_model() -> tuple[dict[str, Any], str, Read]:
    from firecrawl.v2.types import Document
    from firecrawl.v2.utils.normalize import normalize_document_input

    document = sample(Document)
    data = document.model_dump(mode="json", exclude_none=True)
    metadata = data.pop("metadata")
    wire_metadata = {_wire_metadata_key(k): v for k, v in metadata.items()}
    wire = {**data, "metadata": wire_metadata}
    # The camelCase wire metadata is what the SDK's own normaliser reads back into the model.
    assert Document(**normalize_document_input(wire)).metadata == document.metadata
    md = document.metadata
    return (
        {"success": True, "data": wire},
        md.source_url,
        (document.markdown, md.url, md.status_code),
    )


def _wire_metadata_key(snake: str) -> str:
    return "sourceURL" if snake == "source_url" else _camel(snake)


MODEL_RESPONSES = {
    "nimble_extract": _nimble_model,
    "parallel_extract": _parallel_model,
    "exa_contents": _exa_model,
    "firecrawl_scrape": _firecrawl_model,
}


@pytest.mark.parametrize("name", sorted(MODEL_RESPONSES))
def test_read_takes_a_response_built_from_the_sdk_model(name):
    body, url, expected = MODEL_RESPONSES[name]()
    read = VENDOR_ENGINES[name].read(body, url)
    assert (read.text, read.final_url, read.target_status_code) == expected
    assert read.error_class is None and expected[0]


def test_nimble_read_takes_redirects_and_driver_from_the_sdk_model():
    body, url, _ = _nimble_model()
    read = nimble.read(body, url)
    assert [(hop.url, hop.status_code) for hop in read.redirect_chain] == [
        (hop["url"], int(hop["status_code"])) for hop in body["data"]["redirects"]
    ]
    assert read.render_used == body["metadata"]["driver"]


# tavily-ai/tavily-python tests/test_extract.py `dummy_response` (commit ad7fea48).
TAVILY_RECORDED = {
    "results": [{"url": "https://tavily.com", "raw_content": "Example content", "images": []}],
    "failed_results": [],
    "response_time": 0.3,
}


@pytest.mark.parametrize("depth", ["basic", "advanced"])
def test_tavily_read_takes_the_recorded_sdk_example(depth):
    read = tavily.read(TAVILY_RECORDED, "https://tavily.com", depth)
    assert (read.text, read.final_url, read.error_class) == (
        "Example content",
        "https://tavily.com",
        None,
    )


# --- the fake answers only with what the SDK models define ---------------------------------------


def test_the_fakes_responses_validate_against_the_sdk_models(live):
    from firecrawl.v2.types import DocumentMetadata
    from nimble_python.types.extract_run_response import Data, ExtractRunResponse
    from parallel.types.extract_response import ExtractResponse
    from parallel.types.extract_result import ExtractResult

    fakes, url = live.fakes, live.urls["article"]
    body = fakes.nimble({"url": url, "render": False, "formats": ["markdown"]})
    assert set(body) <= model_fields(ExtractRunResponse) and set(body["data"]) <= model_fields(Data)
    ExtractRunResponse.model_validate(body)
    body = fakes.parallel({"urls": [url]})
    assert set(body) <= model_fields(ExtractResponse)
    assert all(set(r) <= model_fields(ExtractResult) for r in body["results"])
    ExtractResponse.model_validate(body)
    metadata = fakes.firecrawl({"url": url})["data"]["metadata"]
    known = {_wire_metadata_key(name) for name in DocumentMetadata.model_fields}
    assert set(metadata) <= known, set(metadata) - known
