"""The SimpleQA vendor search lanes (`collectors.search.LANES`) as QA runner lanes.

All lanes of one run share one `SearchClient` (one HTTP pool, per-lane throttles, limiters
shared per rate group); the runner enters it as the lanes' `resource` for the run's duration.
A lane-abort status (`LaneAborted`: 401/402/403 for every vendor, plus the statuses a lane's
`CallPolicy.extra_abort_statuses` adds, e.g. Tavily's 432/433 plan limits) comes back as its
`ProviderCallFailed` payload (error_class "auth"): the runner logs it and aborts the lane. Keys are checked when the lanes are built,
so a missing key fails before anything is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from collectors.http import LaneAborted, api_key_from_env
from collectors.search import LANES, SearchClient, SearchResult
from collectors.search.lanes import LaneSpec
from warehouse.events import Chunk, ProviderCallCompleted, ProviderCallFailed, SystemRef


class VendorSearchLane:
    needs_search = True

    def __init__(self, spec: LaneSpec, client: SearchClient):
        self.spec = spec
        self.resource = client
        self.name = spec.lane
        self.provider = spec.provider
        self.price_per_1k_usd = spec.price_usd_per_1k
        self.normalizer_version = spec.normalizer_version
        self.concurrency = client.concurrency_for(spec)

    def system_ref(self) -> SystemRef:
        # The rate, concurrency and retry policy actually used, not the spec's defaults.
        return self.resource.system_ref(self.name)

    async def call(self, question: str, *, item_id: str, attempt: int) -> SearchResult:
        """One search call as the one call-result type (chunks, price). Raises LaneAborted."""
        return await self.resource.search(self.name, question, item_id=item_id, attempt=attempt)

    async def search(
        self, question: str, *, item_id: str, attempt: int
    ) -> ProviderCallCompleted | ProviderCallFailed:
        """The QaLane step: the call's payload (a lane abort's payload too), for the log."""
        try:
            return (await self.call(question, item_id=item_id, attempt=attempt)).payload
        except LaneAborted as aborted:
            return aborted.payload

    def normalize(self, call: ProviderCallCompleted) -> list[Chunk]:
        return self.spec.stored_result(call).value or []


def vendor_lanes(
    names: Iterable[str], *, environ: Mapping[str, str] | None = None, **client_options: Any
) -> list[VendorSearchLane]:
    """Lanes sharing one SearchClient; `client_options` go to `SearchClient` (base_urls, ...)."""
    names = list(names)
    unknown = [name for name in names if name not in LANES]
    if unknown:
        raise ValueError(
            f"unknown search lane(s) {', '.join(unknown)}; known: {', '.join(sorted(LANES))}"
        )
    for name in names:
        api_key_from_env(LANES[name].key_env, environ)
    client = SearchClient(names, environ=environ, **client_options)
    return [VendorSearchLane(LANES[name], client) for name in names]
