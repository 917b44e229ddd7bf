"""The provider path over real TLS: the production clients (`collectors.http.slot_clients`, stock
httpx on httpcore) against a loopback HTTPS vendor whose certificate comes from a test CA
(`trustme`). Only the trust roots differ from production; verification stays on."""

from __future__ import annotations

import ssl

import pytest
import trustme

from collectors.http import ErrorClass
from collectors.http import client as http_client
from collectors.search import SearchClient
from tests.fakes import FakeVendorServer
from tests.providers.conftest import CANARY_KEYS, FAST_POLICY

LANE = "exa_search_auto"


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def _https_vendor(ca: trustme.CA, *hostnames: str) -> FakeVendorServer:
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*hostnames).configure_cert(server_context)
    return FakeVendorServer(tls=server_context)


def _trusting(ca: trustme.CA | None) -> ssl.SSLContext:
    context = ssl.create_default_context()  # what httpx.create_ssl_context() builds, + our CA
    if ca is not None:
        ca.configure_trust(context)
    return context


def _search(fake: FakeVendorServer, **policy):
    import asyncio

    async def scenario():
        async with SearchClient(
            [LANE],
            base_urls={"exa": fake.base_url_for("exa")},
            environ=CANARY_KEYS,
            policy_changes={**FAST_POLICY, **policy},
        ) as search:
            first = await search.search(LANE, "who wrote hamlet", item_id="tls-1")
            second = await search.search(LANE, "who painted guernica", item_id="tls-2")
            return first, second

    return asyncio.run(scenario())


def test_search_over_tls_with_a_trusted_certificate(ca, monkeypatch):
    monkeypatch.setattr(http_client, "shared_tls_context", lambda: _trusting(ca))
    with _https_vendor(ca, "127.0.0.1") as fake:
        assert fake.base_url.startswith("https://")
        first, second = _search(fake)
        received = fake.requests
    assert first.outcome.completed and second.outcome.completed
    assert len(first.value) == 10 and first.outcome.payload.request.url.startswith("https://")
    assert first.outcome.payload.status_code == 200
    assert [r.json()["query"] for r in received] == ["who wrote hamlet", "who painted guernica"]
    # The key travelled inside TLS and was redacted from what is stored.
    assert received[0].headers["x-api-key"] == CANARY_KEYS["EXA_API_KEY"]
    assert CANARY_KEYS["EXA_API_KEY"] not in first.outcome.payload.model_dump_json()


def test_an_untrusted_certificate_is_refused(ca, monkeypatch):
    monkeypatch.setattr(http_client, "shared_tls_context", lambda: _trusting(None))
    with _https_vendor(ca, "127.0.0.1") as fake:
        first, _ = _search(fake, max_attempts=1)
    payload = first.outcome.payload
    assert payload.event_type == "provider_call_failed"
    assert payload.error_class == ErrorClass.CONNECTION and payload.landed is False
    assert "CERTIFICATE_VERIFY_FAILED" in payload.error_message


def test_a_certificate_for_another_host_is_refused(ca, monkeypatch):
    monkeypatch.setattr(http_client, "shared_tls_context", lambda: _trusting(ca))
    with _https_vendor(ca, "api.example.test") as fake:
        first, _ = _search(fake, max_attempts=1)
    payload = first.outcome.payload
    assert payload.error_class == ErrorClass.CONNECTION
    assert "CERTIFICATE_VERIFY_FAILED" in payload.error_message


def test_production_context_verifies_certificates_and_hostnames():
    context = http_client.shared_tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname is True
