"""Provider-layer fixtures: canary keys in the environment, one loopback fake vendor server per
session (faults and recordings reset per test), and a tiny retry policy so faults cost ms."""

from __future__ import annotations

import asyncio
import logging

import pytest

from collectors.search import LANES, SearchClient
from tests.fakes import FakeVendorServer
from warehouse.events import parse_payload

# A key per env var; each is unique, so a leak names its lane.
CANARY_KEYS = {
    spec.key_env: f"sk-canary-{spec.key_env.lower()}-Zq8+/x9=7f3a1c0e5b2d4"
    for spec in LANES.values()
}
FAST_POLICY = {
    "backoff_base_s": 0.001,
    "backoff_cap_s": 0.005,
    "connect_timeout_s": 2.0,
    "read_timeout_s": 2.0,
    "attempt_timeout_s": 2.0,
}


@pytest.fixture
def canary_env(monkeypatch) -> dict[str, str]:
    for name, value in CANARY_KEYS.items():
        monkeypatch.setenv(name, value)
    return dict(CANARY_KEYS)


@pytest.fixture(scope="session")
def _session_fake_server():
    with FakeVendorServer() as server:
        yield server


@pytest.fixture
def fake(_session_fake_server) -> FakeVendorServer:
    _session_fake_server.reset(keys={})
    yield _session_fake_server
    _session_fake_server.reset(keys={})


@pytest.fixture
def run():
    """run(coro) -> result: each test drives its own event loop."""
    return asyncio.run


@pytest.fixture
def search_with(fake, canary_env):
    """search_with(lanes, **overrides) -> SearchClient pointed at the fake server."""

    def make(lanes=None, **overrides) -> SearchClient:
        options = {
            "base_urls": fake.base_urls(),
            "rate_per_s": 1000.0,
            "policy_changes": FAST_POLICY,
        }
        policy = {**FAST_POLICY, **overrides.pop("policy_changes", {})}
        options.update(overrides)
        options["policy_changes"] = policy
        return SearchClient(lanes, **options)

    return make


@pytest.fixture
def debug_logs(caplog):
    """Capture every logger (ours, httpx, httpcore) at DEBUG for leak checks."""
    caplog.set_level(logging.DEBUG)
    return caplog


def assert_valid_payload(payload) -> dict:
    """The payload round-trips through its model as JSON (what the log stores)."""
    as_json = payload.model_dump(mode="json")
    assert parse_payload(payload.event_type, as_json) == payload
    return as_json
