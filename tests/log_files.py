"""A segment's bytes read and rewritten as a forger or a damaged disk would, whether the segment is
stored plain or, once ingested, compressed (warehouse/log.py): tests that tamper use these."""

from __future__ import annotations

from pathlib import Path

import zstandard

from warehouse.log import compressed_path


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
