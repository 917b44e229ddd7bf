"""Each vendor's search module declares its own lanes (price, rate, settings), its answer module
its answer product; the registries only collect them, and the one call-result type carries what
a call cost."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

import pytest

import collectors.vendors
from collectors.http import CallOutcome, CallResult
from collectors.qa.answer_lanes import ANSWER_LANES
from collectors.search import LANES
from collectors.search.lanes import _lanes
from tests.fakes.vendor_responses import SEARCH_ENDPOINTS
from warehouse.events import CallTimings, ProviderCallFailed, RecordedRequest


def capability(name: str) -> tuple:
    """Every vendor package's `name` module (search, answer), found, not listed: a vendor's
    module that the registry does not collect fails the registry tests below."""
    return tuple(
        importlib.import_module(f"collectors.vendors.{info.name}.{name}")
        for info in pkgutil.iter_modules(collectors.vendors.__path__)
        if info.ispkg
        and importlib.util.find_spec(f"collectors.vendors.{info.name}.{name}") is not None
    )


MODULES = capability("search")
ANSWER_MODULES = capability("answer")


def test_the_registry_is_the_vendor_modules_lanes_and_nothing_else():
    declared = [spec for module in MODULES for spec in module.LANES]
    assert sorted(LANES) == sorted(spec.lane for spec in declared)
    assert all(LANES[spec.lane] is spec for spec in declared)
    for module in MODULES:
        for spec in module.LANES:
            # every fact of the vendor comes from its module, none is written down again
            assert (spec.provider, spec.key_env, spec.base_url) == (
                module.PROVIDER,
                module.KEY_ENV,
                module.BASE_URL,
            )
            assert spec.normalize is module.normalize
            assert spec.normalizer_version == module.NORMALIZER_VERSION
    # every vendor module has a loopback fake speaking its wire format
    assert {module.PROVIDER for module in MODULES} == set(SEARCH_ENDPOINTS)


def test_a_lane_declared_twice_is_refused():
    nimble = importlib.import_module("collectors.vendors.nimble.search")
    with pytest.raises(ValueError, match="declared twice: nimble_search"):
        _lanes(*nimble.LANES, *nimble.LANES)


def test_answer_lanes_come_from_their_vendor_modules():
    modules = {module.PROVIDER: module for module in ANSWER_MODULES}
    assert set(ANSWER_LANES) == {m.ANSWER_LANE.lane for m in modules.values()}
    for spec in ANSWER_LANES.values():
        module = modules[spec.provider]
        assert spec is module.ANSWER_LANE
        assert (spec.key_env, spec.base_url) == (module.KEY_ENV, module.BASE_URL)


def _failed(lane: str) -> ProviderCallFailed:
    return ProviderCallFailed(
        lane=lane,
        provider="exa",
        stage="search",
        item_id="i",
        attempt=1,
        request=RecordedRequest(method="POST", url="https://api.exa.ai/search", body={}),
        error_class="timeout",
        error_message="no response in 60 s",
        status_code=None,
        landed=False,
        raw_body=None,
        timings=CallTimings(queue_wait_ms=1.0, round_trip_ms=None, whole_call_ms=60_000.0),
        http_attempts=3,
        concurrency=1,
    )


def test_a_failed_call_has_no_value_and_no_list_price_cost():
    spec = LANES["exa_search_auto"]
    result = spec.stored_result(_failed(spec.lane))
    assert (result.completed, result.value, result.cost_usd) == (False, None, None)
    assert result.timings.whole_call_ms == 60_000.0 and result.raw_response is None
    # the normaliser is never asked about a failed call
    untouched = CallResult.of(
        CallOutcome(_failed(spec.lane)),
        lambda body: pytest.fail("normalised a failed call"),
        normalizer_version="x@1",
        price_usd_per_1k=1.0,
    )
    assert untouched.value is None
