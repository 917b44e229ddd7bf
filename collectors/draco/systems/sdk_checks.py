"""The date every research module's SDK check was last made.

Each vendor's SDK release is declared once in collectors.vendors.<vendor> (`SDK`); each research
module records its own `SDK_CHECK = SDK.check(docs=...)`, and tests/draco/test_research_sdk_contracts.py
holds the module's requests and parsers against that SDK's own types and wire format, failing
when the installed SDK version differs from the recorded one, so a bump forces a re-check (and
a new date). The collectors never import an SDK: they are development dependencies only.

One record type for every vendor module (search lanes, research systems, LLM backends):
`collectors.http.vendor_truth.SdkCheck`; tests/providers/test_vendor_truth.py checks them all.
"""

from __future__ import annotations

from collectors.http.vendor_truth import SdkCheck

CHECKED_ON = "2026-12-01"

__all__ = ["CHECKED_ON", "SdkCheck"]
