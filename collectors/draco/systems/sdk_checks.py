"""Which official vendor SDK (and docs page) each research module was last checked against.

Each vendor module declares `SDK_CHECK`; tests/draco/test_research_sdk_contracts.py holds the
module's requests and parsers against that SDK's own types and wire format, and fails when the
installed SDK version differs from the recorded one, so a bump forces a re-check (and a new
date here). The collectors never import an SDK: they are development dependencies only.

One record type for every vendor module (search lanes, research systems, LLM backends):
`collectors.http.vendor_truth.SdkCheck`; tests/providers/test_vendor_truth.py checks them all.
"""

from __future__ import annotations

from collectors.http.vendor_truth import SdkCheck

CHECKED_ON = "2026-12-01"

__all__ = ["CHECKED_ON", "SdkCheck"]
