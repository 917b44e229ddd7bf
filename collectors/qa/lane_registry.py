"""Every lane a QA run can use, by name: two offline lanes and the nine vendor search lanes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from collectors.qa.lanes import ClosedBookLane, LocalBm25Lane, QaLane
from collectors.qa.local_corpus import PassageCorpus

OFFLINE_LANES = ("closed-book", "local-bm25")


class LaneConfigError(ValueError):
    pass


def available_lanes() -> list[str]:
    from collectors.search import LANES

    return [*OFFLINE_LANES, *sorted(LANES)]


def build_lanes(
    names: Iterable[str],
    *,
    corpus: PassageCorpus | None = None,
    environ: Mapping[str, str] | None = None,
    **search_client_options: Any,
) -> list[QaLane]:
    """Lanes in the order given. `local-bm25` needs `corpus`; vendor lanes need their keys in
    the environment (checked now, before anything is written)."""
    names = list(names)
    if not names:
        raise LaneConfigError("no lanes given")
    known = set(available_lanes())
    unknown = [name for name in names if name not in known]
    if unknown:
        raise LaneConfigError(
            f"unknown lane(s) {', '.join(unknown)}; available: {', '.join(available_lanes())}"
        )
    lanes: dict[str, QaLane] = {}
    vendor = [name for name in names if name not in OFFLINE_LANES]
    if vendor:
        from collectors.qa.vendor_lanes import vendor_lanes

        for lane in vendor_lanes(vendor, environ=environ, **search_client_options):
            lanes[lane.name] = lane
    if "closed-book" in names:
        lanes["closed-book"] = ClosedBookLane()
    if "local-bm25" in names:
        if corpus is None:
            raise LaneConfigError(
                "lane local-bm25 needs a local corpus (a corpus directory or documents .jsonl)"
            )
        lanes["local-bm25"] = LocalBm25Lane(corpus)
    return [lanes[name] for name in names]
