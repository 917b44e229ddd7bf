"""Deterministic ids derived from natural keys.

Appending the same fact twice yields the same id, so every layer can treat a repeat as a no-op."""

from __future__ import annotations

import uuid

# Fixed forever: changing it would change every id in every existing log.
BENCH_NAMESPACE = uuid.UUID("5b0f3c52-7d7e-4d37-9a55-0f3e6c1d2a90")


def _key(parts: tuple[object, ...]) -> str:
    for part in parts:
        if part is None:
            raise ValueError("natural key parts must not be None")
    # \x1f (unit separator) cannot appear in our keys, so ("a|b","c") != ("a","b|c").
    return "\x1f".join(str(part) for part in parts)


def derive_id(kind: str, *parts: object) -> str:
    return str(uuid.uuid5(BENCH_NAMESPACE, _key((kind, *parts))))


def event_id_for(event_type: str, *natural_key: object) -> str:
    return derive_id(f"event:{event_type}", *natural_key)


def run_id_for(spec_sha256: str) -> str:
    return derive_id("run", spec_sha256)
