"""Logs for tests: a run's worth of simple events to load, and a segment's bytes read and
rewritten as a forger or a damaged disk would, whether the segment is stored plain or, once
ingested, compressed (warehouse/log.py)."""

from __future__ import annotations

from pathlib import Path

import zstandard

from warehouse.events import Envelope, ItemRegistered, make_event
from warehouse.log import compressed_path
from warehouse.provenance import producer_for


def item_events(run_id: str, start: int, count: int, *, tool: str = "tests") -> list[Envelope]:
    """`count` item_registered events of run `run_id` (items `start`...): ids no other run has."""
    producer = producer_for({"test": tool})
    return [
        make_event(
            ItemRegistered(
                item_id=f"item-{i}",
                dataset_sha256="0" * 64,
                position=i,
                ground_truth_text=f"text {i} of {run_id}",
                anchors=[],
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
