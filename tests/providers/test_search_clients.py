"""Each lane against respx fixtures shaped like the vendor's documented response: the request
is exactly what providers.md §1 says, and the response normalises to ranked chunks."""

from __future__ import annotations

import json

import httpx
import pytest
import respx

from collectors.http import REDACTED
from collectors.search import LANES, PRICE_SNAPSHOT, chunks_from_raw_body, chunks_payload
from tests.providers import vendor_documents as docs
from tests.providers.conftest import CANARY_KEYS, FAST_POLICY, assert_valid_payload

QUESTION = 'Who wrote "Hamlet"?'

# lane -> (method, documented URL, auth header, auth value, body or query params, response)
EXPECTED = {
    "nimble_search": (
        "POST",
        "https://sdk.nimbleway.com/v2/search",
        "authorization",
        "Bearer {key}",
        {"query": QUESTION, "max_results": 10, "search_depth": "standard", "include_answer": False},
        docs.NIMBLE,
    ),
    "exa_search_auto": (
        "POST",
        "https://api.exa.ai/search",
        "x-api-key",
        "{key}",
        {"query": QUESTION, "type": "auto", "numResults": 10, "contents": {"summary": True}},
        docs.EXA,
    ),
    "exa_search_fast": (
        "POST",
        "https://api.exa.ai/search",
        "x-api-key",
        "{key}",
        {"query": QUESTION, "type": "fast", "numResults": 10, "contents": {"summary": True}},
        docs.EXA,
    ),
    "parallel_search_basic": (
        "POST",
        "https://api.parallel.ai/v1/search",
        "x-api-key",
        "{key}",
        {
            "objective": QUESTION,
            "search_queries": [QUESTION],
            "mode": "basic",
            "advanced_settings": {"max_results": 10},
        },
        docs.PARALLEL,
    ),
    "parallel_search_turbo": (
        "POST",
        "https://api.parallel.ai/v1/search",
        "x-api-key",
        "{key}",
        {
            "objective": QUESTION,
            "search_queries": [QUESTION],
            "mode": "turbo",
            "advanced_settings": {"max_results": 10},
        },
        docs.PARALLEL,
    ),
    "tavily_search_basic": (
        "POST",
        "https://api.tavily.com/search",
        "authorization",
        "Bearer {key}",
        {"query": QUESTION, "search_depth": "basic", "include_answer": False, "max_results": 10},
        docs.TAVILY,
    ),
    "tavily_search_fast": (
        "POST",
        "https://api.tavily.com/search",
        "authorization",
        "Bearer {key}",
        {"query": QUESTION, "search_depth": "fast", "include_answer": False, "max_results": 10},
        docs.TAVILY,
    ),
    "brave_search": (
        "GET",
        "https://api.search.brave.com/res/v1/web/search",
        "x-subscription-token",
        "{key}",
        {"q": QUESTION, "count": "10", "extra_snippets": "true", "operators": "false"},
        docs.BRAVE,
    ),
    "firecrawl_search": (
        "POST",
        "https://api.firecrawl.dev/v2/search",
        "authorization",
        "Bearer {key}",
        {"query": QUESTION, "limit": 10, "sources": [{"type": "web"}], "timeout": 55000},
        docs.FIRECRAWL,
    ),
}

EXPECTED_CHUNKS = {
    "nimble": [
        (
            "https://en.wikipedia.org/wiki/Paris",
            "Paris - Wikipedia",
            "Paris is the capital and most populous city of France.\nPopulation 2.1 million.",
        ),
        (
            "https://en.wikipedia.org/wiki/France",
            "France",
            "France is a country in Western Europe.",
        ),
    ],
    "exa": [
        (
            "https://www.nobelprize.org/prizes/physics/1921/einstein/",
            "Albert Einstein – Facts",
            "Einstein received the 1921 Nobel Prize in Physics.",
        ),
        ("https://example.com/no-summary", "No summary here", ""),
    ],
    "parallel": [
        (
            "https://www.un.org/en/about-us/history-of-the-un",
            "History of the United Nations",
            "The UN was founded in 1945.\nIts charter was signed in San Francisco.",
        ),
        ("https://example.org/empty", "Empty", ""),
    ],
    "tavily": [
        (
            "https://en.wikipedia.org/wiki/Hamlet",
            "Hamlet - Wikipedia",
            "Hamlet is a tragedy written by William Shakespeare.",
        )
    ],
    "brave": [
        (
            "https://en.wikipedia.org/wiki/Burj_Khalifa",
            "Burj Khalifa",
            "The Burj Khalifa is 828\xa0m tall & opened in 2010.\nIt has 163 floors.\nDesigned by SOM.",
        ),
        ("https://example.org/skyscrapers", "Skyscrapers", "A list of skyscrapers."),
    ],
    "firecrawl": [
        ("https://www.firecrawl.dev/", "Firecrawl", "Turn websites into LLM-ready data."),
        ("https://docs.firecrawl.dev/", "Docs", "Firecrawl documentation."),
    ],
}

EXPECTED_REQUEST_IDS = {
    "nimble": "req-1",
    "exa": "b5947044c4b78efa9552a7c89b306d95",
    "parallel": "search_e749586f-00f3-4c39-b5e4-a7e9a5bd7c2b",
    "tavily": "123e4567-e89b-12d3-a456-426614174111",
    "brave": "brave-hdr-1",  # no body id: the X-Request-Id header, when sent
    "firecrawl": "search-7d1c",
}


def test_registry_has_the_nine_lanes_with_prices_and_rates():
    assert sorted(LANES) == sorted(EXPECTED)
    prices = {lane: spec.price_usd_per_1k for lane, spec in LANES.items()}
    assert prices == {
        "nimble_search": 5.00,
        "exa_search_auto": 7.00,
        "exa_search_fast": 7.00,
        "parallel_search_basic": 5.00,
        "parallel_search_turbo": 1.00,
        "tavily_search_basic": 8.00,
        "tavily_search_fast": 8.00,
        "brave_search": 5.00,
        "firecrawl_search": 1.98,
    }
    assert {spec.price_snapshot for spec in LANES.values()} == {PRICE_SNAPSHOT} == {"2026-09-17"}
    rates = {lane: spec.rate_per_s for lane, spec in LANES.items()}
    assert rates["nimble_search"] == rates["exa_search_auto"] == rates["parallel_search_basic"] == 9
    assert rates["tavily_search_basic"] == rates["brave_search"] == rates["firecrawl_search"] == 1
    # One vendor key, one budget: the two lanes of a vendor share a limiter.
    assert LANES["exa_search_auto"].rate_group == LANES["exa_search_fast"].rate_group
    assert LANES["tavily_search_basic"].rate_group == LANES["tavily_search_fast"].rate_group
    assert 409 in LANES["nimble_search"].policy.extra_retryable_statuses
    assert 409 not in LANES["exa_search_auto"].policy.extra_retryable_statuses
    for spec in LANES.values():
        ref = spec.system_ref()
        assert ref.name == spec.lane and ref.version == spec.normalizer_version
        assert ref.settings["max_results"] == 10


@pytest.mark.parametrize("lane", sorted(EXPECTED))
def test_lane_sends_the_documented_request_and_normalizes_the_documented_response(
    lane, canary_env, run
):
    method, url, auth_header, auth_value, sent, document = EXPECTED[lane]
    spec = LANES[lane]
    key = CANARY_KEYS[spec.key_env]

    async def scenario():
        from collectors.search import SearchClient

        # using="httpx": respx's default patches httpcore, which our clients' transport
        # (collectors.http.transport) does not use; this mocks at the httpx client instead.
        with respx.mock(assert_all_called=True, using="httpx") as mock:
            route = mock.route(method=method, url__startswith=url).mock(
                return_value=httpx.Response(
                    200, json=document, headers={"X-Request-Id": "brave-hdr-1"}
                )
            )
            async with SearchClient([lane], policy_changes=FAST_POLICY) as search:
                result = await search.search(lane, QUESTION, item_id="item-1")
            return route.calls.last.request, result

    request, result = run(scenario())

    # what went over the wire
    assert request.method == method
    assert str(request.url).split("?")[0] == url
    assert request.headers[auth_header] == auth_value.format(key=key)
    assert request.headers["accept"] == "application/json"
    if method == "GET":
        assert dict(request.url.params) == sent
        assert request.headers["accept-encoding"] == "gzip"
        assert request.content == b""
    else:
        assert json.loads(request.content) == sent
        assert request.headers["content-type"] == "application/json"

    # what was recorded: the same request with the key replaced
    payload = result.outcome.payload
    assert result.outcome.completed
    assert_valid_payload(payload)
    assert payload.request.headers[auth_header] == REDACTED
    assert key not in payload.model_dump_json()
    assert payload.request.method == method
    assert payload.request.body == (None if method == "GET" else sent)
    assert payload.lane == lane and payload.provider == spec.provider
    assert payload.stage == "search" and payload.item_id == "item-1" and payload.attempt == 1
    assert payload.status_code == 200 and payload.http_attempts == 1
    assert json.loads(payload.raw_body) == document
    assert payload.vendor_request_id == EXPECTED_REQUEST_IDS[spec.provider]
    assert payload.concurrency == spec.concurrency and payload.rate_per_s == spec.rate_per_s

    # normalised: provider order, ranks 1..n, documented text fields
    chunks = [(c.url, c.title, c.text) for c in result.value]
    assert chunks == EXPECTED_CHUNKS[spec.provider]
    assert [c.rank for c in result.value] == list(range(1, len(chunks) + 1))
    # replaying the stored raw body gives the same chunks (re-normalisation from the log)
    assert chunks_from_raw_body(lane, payload.raw_body) == result.value
    normalized = chunks_payload(result, "source-event-id")
    assert normalized.normalizer_version == spec.normalizer_version
    assert_valid_payload(normalized)
    # the one call-result type: raw request and response as stored, timings, list-price cost
    assert (result.request, result.raw_response) == (payload.request, payload.raw_body)
    assert result.timings == payload.timings and result.timings.round_trip_ms > 0
    assert result.cost_usd == pytest.approx(spec.price_usd_per_1k / 1000)
    stored = spec.stored_result(payload)  # a resumed run rebuilds the same result from the log
    assert (stored.value, stored.cost_usd, stored.lane) == (result.value, result.cost_usd, lane)


@pytest.mark.parametrize("lane", sorted(EXPECTED))
@pytest.mark.parametrize(
    "body",
    [{}, {"results": None, "web": "x", "data": []}, [], "not json at all", {"results": [1, None]}],
)
def test_normalizers_turn_unexpected_shapes_into_zero_chunks(lane, body):
    raw = body if isinstance(body, str) else json.dumps(body)
    assert chunks_from_raw_body(lane, raw) == []


def test_system_ref_records_the_effective_settings():
    from collectors.search import SearchClient

    client = SearchClient(
        ["brave_search"], rate_per_s=0.5, concurrency=2, policy_changes={"max_attempts": 7}
    )
    settings = client.system_ref("brave_search").settings
    assert settings["rate_per_s"] == 0.5 and settings["concurrency"] == 2
    assert settings["retry"]["max_attempts"] == 7
    assert settings["operators"] is False and settings["extra_snippets"] is True
    assert settings["price_usd_per_1k"] == 5.0 and settings["price_snapshot"] == "2026-09-17"


def test_search_requires_the_key_from_the_environment(monkeypatch, run):
    from collectors.http import MissingApiKey
    from collectors.search import SearchClient

    monkeypatch.delenv("EXA_API_KEY", raising=False)

    async def scenario():
        async with SearchClient(["exa_search_auto"], environ={}) as search:
            await search.search("exa_search_auto", QUESTION, item_id="i")

    with pytest.raises(MissingApiKey, match="EXA_API_KEY"):
        run(scenario())


def test_unknown_lane_is_refused():
    from collectors.search import SearchClient

    with pytest.raises(ValueError, match="unknown lane"):
        SearchClient(["bing_search"])


@pytest.mark.parametrize("lane", sorted(LANES))
def test_recorded_settings_say_what_the_request_sends(lane):
    # A SystemRef setting named like a body field must hold the value the body carries: the
    # warehouse row is read as "this lane sent this", so a stale setting misdescribes the run.
    spec = LANES[lane]
    body = spec.build_request(spec.base_url, "k", QUESTION, spec.max_results).json_body or {}
    settings = spec.system_ref().settings
    shared = set(settings) & set(body)
    assert {k: settings[k] for k in shared} == {k: body[k] for k in shared}


def test_firecrawl_source_objects_are_a_new_regime():
    # firecrawl_search@1 sent `sources: ["web"]`; the SDK's wire form is source objects, and a
    # 200 with `success: false` is now a failure: rows of the two must not be pooled.
    spec = LANES["firecrawl_search"]
    body = spec.build_request(spec.base_url, "k", QUESTION, spec.max_results).json_body
    assert body["sources"] == [{"type": "web"}] == spec.system_ref().settings["sources"]
    assert spec.normalizer_version == "firecrawl_search@2"
