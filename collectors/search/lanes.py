"""The SimpleQA search lanes (methodology §2.2), as an explicit registry: `LANES` collects the
lanes each vendor's search module declares (`collectors/vendors/<vendor>/search.py`, on the base
`collectors.products.search`: price, rate, concurrency and settings live in the vendor's
module); adding a vendor is its package and one line here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from collectors.products.search import (
    MAX_RESULTS,
    PATIENT_POLICY,
    PRICE_SNAPSHOT,
    STANDARD_POLICY,
    LaneSpec,
)
from collectors.vendors.brave import search as brave
from collectors.vendors.exa import search as exa
from collectors.vendors.firecrawl import search as firecrawl
from collectors.vendors.nimble import search as nimble
from collectors.vendors.parallel import search as parallel
from collectors.vendors.tavily import search as tavily

__all__ = [
    "LANES",
    "MAX_RESULTS",
    "PATIENT_POLICY",
    "PRICE_SNAPSHOT",
    "STANDARD_POLICY",
    "LaneSpec",
]


def _lanes(*specs: LaneSpec) -> Mapping[str, LaneSpec]:
    names = [spec.lane for spec in specs]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise ValueError(f"search lane(s) declared twice: {', '.join(duplicated)}")
    return MappingProxyType({spec.lane: spec for spec in specs})


LANES: Mapping[str, LaneSpec] = _lanes(
    *nimble.LANES, *exa.LANES, *parallel.LANES, *tavily.LANES, *brave.LANES, *firecrawl.LANES
)
