"""Upcasters: old event shapes are lifted to the current one on read, never rewritten on disk.

Each upcaster takes (event_type, from_version) and returns the payload at from_version + 1.
Chains run until the payload reaches `PAYLOAD_MODELS[event_type].schema_version`.
The stored line (and its content hash) stays exactly as written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from warehouse.events import PAYLOAD_MODELS

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def upcaster(event_type: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    def register(func: Upcaster) -> Upcaster:
        UPCASTERS[(event_type, from_version)] = func
        return func

    return register


@upcaster("extraction_completed", 1)
def _extraction_completed_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 called the system `engine*` and predates imports and render routing.

    Every v1 event came from a local engine fed the stored HTML, so those are the facts."""
    lifted = {k: v for k, v in payload.items() if not k.startswith("engine")}
    lifted["system"] = payload["engine"]
    lifted["system_version"] = payload["engine_version"]
    lifted["settings"] = payload.get("engine_settings", {})
    lifted["source"] = "engine"
    lifted["render_path"] = "raw_html"
    return lifted


@upcaster("answer_graded", 1)
@upcaster("relevance_graded", 1)
def _graded_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v2 says how the sample ended, as `judge_verdict` does. A v1 grade event was always a
    completion (parsed or not): v1 logged a failed call as `provider_call_failed` instead."""
    return {**payload, "outcome": "parsed" if payload["parse_ok"] else "unparsed"}


class UpcastError(ValueError):
    pass


def upcast(event: dict[str, Any]) -> dict[str, Any]:
    """Return `event` with its payload at the current schema version (a new dict if changed)."""
    event_type = event["event_type"]
    model = PAYLOAD_MODELS.get(event_type)
    if model is None:
        raise UpcastError(f"unknown event_type {event_type!r}")
    version = event["schema_version"]
    if version == model.schema_version:
        return event
    if version > model.schema_version:
        raise UpcastError(
            f"{event_type} schema_version {version} is newer than this code "
            f"({model.schema_version}); upgrade bench-warehouse"
        )
    payload = event["payload"]
    while version < model.schema_version:
        step = UPCASTERS.get((event_type, version))
        if step is None:
            raise UpcastError(f"no upcaster for {event_type} v{version}")
        payload = step(payload)
        version += 1
    return {**event, "payload": payload, "schema_version": version}
