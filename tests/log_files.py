"""Logs for tests: a run's worth of simple events to load, and a segment's bytes read and
rewritten as a forger or a damaged disk would, whether the segment is stored plain or, once
ingested, compressed (warehouse/log.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import zstandard

from warehouse.events import Envelope, ItemRegistered, make_event
from warehouse.log import compressed_path
from warehouse.provenance import producer_for


def item_events(
    run_id: str,
    start: int,
    count: int,
    *,
    tool: str = "tests",
    text: Callable[[int], str] | None = None,
    anchors: Callable[[int], list[str]] | None = None,
    item_prefix: str = "item",
) -> list[Envelope]:
    """`count` item_registered events of run `run_id` (items `start`...): ids no other run has.
    `text(i)` and `anchors(i)` give an item's ground truth and anchors (default: a short line,
    no anchor); `tool` names the test in the events' producer."""
    producer = producer_for({"test": tool})
    return [
        make_event(
            ItemRegistered(
                item_id=f"{item_prefix}-{i}",
                dataset_sha256="0" * 64,
                position=i,
                ground_truth_text=text(i) if text else f"text {i} of {run_id}",
                anchors=anchors(i) if anchors else [],
                anchor_rule_version="1",
            ),
            run_id=run_id,
            producer=producer,
        )
        for i in range(start, start + count)
    ]


def segment_bytes(segment: Path) -> bytes:
    if segment.exists():
        return segment.read_bytes()
    return zstandard.ZstdDecompressor().stream_reader(compressed_path(segment).read_bytes()).read()


def write_segment(segment: Path, data: bytes) -> None:
    """`data` as the segment's bytes, stored in the form it has (a new segment: plain)."""
    stored = compressed_path(segment)
    if not segment.exists() and stored.exists():
        stored.write_bytes(zstandard.ZstdCompressor().compress(data))
    else:
        segment.write_bytes(data)


def remove_segment(segment: Path) -> None:
    segment.unlink(missing_ok=True)
    compressed_path(segment).unlink(missing_ok=True)
