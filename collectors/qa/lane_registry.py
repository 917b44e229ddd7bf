"""Every lane a QA run can use, by name: the two offline lanes, the vendor search lanes
(`collectors.search.LANES`) and the vendor answer lanes (`collectors.qa.answer_lanes`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from collectors.local_corpus import PassageCorpus
from collectors.qa.lanes import ClosedBookLane, LocalBm25Lane, QaLane

OFFLINE_LANES = ("closed-book", "local-bm25")
MIX_LANE_KINDS_ENV = "BENCH_MIX_LANE_KINDS"


class LaneConfigError(ValueError):
    pass


def available_lanes() -> list[str]:
    from collectors.qa.answer_lanes import ANSWER_LANES
    from collectors.search import LANES

    return [*OFFLINE_LANES, *sorted(LANES), *ANSWER_LANES]


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
    from collectors.qa.answer_lanes import ANSWER_LANES, answer_lanes

    answering = [name for name in names if name in ANSWER_LANES]
    env = os.environ if environ is None else environ
    if answering and len(answering) < len(names) and env.get(MIX_LANE_KINDS_ENV) != "1":
        raise LaneConfigError(
            f"answer lane(s) {', '.join(answering)} are the vendors' own answers and are never "
            "ranked with synthesised lanes unless you ask: run them in a run of their own, or set "
            f"{MIX_LANE_KINDS_ENV}=1 to put both kinds in one run"
        )
    if answering:  # vendors' own answer products: a separate lane kind
        for lane in answer_lanes(
            answering,
            environ=env,
            base_urls=search_client_options.get("base_urls"),
            rate_per_s=search_client_options.get("rate_per_s"),
        ):
            lanes[lane.name] = lane
    vendor = [name for name in names if name not in OFFLINE_LANES and name not in ANSWER_LANES]
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
