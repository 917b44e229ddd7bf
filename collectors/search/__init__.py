"""Search providers for the SimpleQA lanes: one module per vendor, one registry (`LANES`)."""

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
