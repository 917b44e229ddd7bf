"""Which official vendor SDK (and docs page) each research module was last checked against.

Each vendor module declares `SDK_CHECK`; tests/draco/test_research_sdk_contracts.py holds the
module's requests and parsers against that SDK's own types and wire format, and fails when the
installed SDK version differs from the recorded one, so a bump forces a re-check (and a new
date here). The collectors never import an SDK: they are development dependencies only.

(Minimal on purpose: the search lanes keep an equivalent record; the two can be unified.)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SdkCheck:
    package: str  # the distribution name on the package registry
    version: str  # exactly the version the module was checked against
    docs: str  # the vendor docs page read alongside the SDK source
    checked_on: str  # ISO date of the check


CHECKED_ON = "2026-12-01"
