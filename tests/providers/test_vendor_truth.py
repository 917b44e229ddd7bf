"""Every vendor client records the SDK release it was checked against; a different installed
release fails here until someone re-checks the client and updates the record."""

from __future__ import annotations

import importlib

import pytest

from collectors.http.vendor_truth import DeclaredCheck, SdkCheck, declared_checks, stale_checks
from collectors.search import LANES

# Search vendors with an official Python SDK, as their packages declare it (Brave publishes none).
SEARCH_SDKS = {
    spec.provider: importlib.import_module(f"collectors.vendors.{spec.provider}").SDK.package
    for spec in LANES.values()
    if hasattr(importlib.import_module(f"collectors.vendors.{spec.provider}"), "SDK")
}


def test_installed_sdks_are_the_ones_the_clients_were_checked_against():
    assert stale_checks() == []


def test_every_search_vendor_with_an_sdk_and_both_llm_backends_declare_a_check():
    by_module = {c.module: c.check.package for c in declared_checks()}
    for provider, package in SEARCH_SDKS.items():
        assert by_module.get(f"collectors.vendors.{provider}.search") == package
    assert {spec.provider for spec in LANES.values()} - set(SEARCH_SDKS) == {"brave"}
    assert by_module["collectors.llm.openai_backend"] == "openai"
    assert by_module["collectors.llm.anthropic_backend"] == "anthropic"
    research = {m for m in by_module if m.endswith(".research")}
    assert len(research) == 9  # the research vendors use the same record


def test_a_different_installed_version_is_reported_with_what_to_do():
    check = SdkCheck("exa-py", "0.0.1", "https://docs.exa.ai/reference/search", "2026-12-01")
    problem = DeclaredCheck("collectors.vendors.exa.search", check).problem()
    assert "exa-py==0.0.1" in problem and "installed 2.27.0" in problem
    assert "re-check" in problem
    missing = SdkCheck("no-such-sdk-xyz", "1.0", "https://example.org/docs", "2026-12-01")
    assert "not installed" in DeclaredCheck("m", missing).problem()


def test_a_malformed_record_fails_at_import():
    with pytest.raises(ValueError):
        SdkCheck("exa-py", "2.27.0", "https://docs.exa.ai", "2026-13-01")
    with pytest.raises(ValueError, match="https"):
        SdkCheck("exa-py", "2.27.0", "docs.exa.ai", "2026-12-01")
