"""The SimpleQA search lanes: one registry (`LANES`) collecting each vendor's
`collectors.vendors.<vendor>.search`, and the client that calls them."""

from collectors.search.client import (
    PreflightReport,
    SearchClient,
    SearchResult,
    chunks_from_raw_body,
    chunks_payload,
)
from collectors.search.lanes import LANES, MAX_RESULTS, PRICE_SNAPSHOT, LaneSpec

__all__ = [
    "LANES",
    "MAX_RESULTS",
    "PRICE_SNAPSHOT",
    "LaneSpec",
    "PreflightReport",
    "SearchClient",
    "SearchResult",
    "chunks_from_raw_body",
    "chunks_payload",
]
