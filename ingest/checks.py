"""Structural checks for log lines, run inside DuckDB so loading stays near `read_json` speed.

The checks are derived from the pydantic payload models, so the models stay the single
definition of every event's shape. Lines at an older schema version take the Python path
(upcast, then full pydantic validation) instead: they are rare.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from warehouse.events import PAYLOAD_MODELS

UUID_RE = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
SHA_RE = "^[0-9a-f]{64}$"

_JSON_TYPES: dict[Any, tuple[str, ...]] = {
    str: ("VARCHAR",),
    int: ("BIGINT", "UBIGINT"),
    float: ("DOUBLE", "BIGINT", "UBIGINT"),
    bool: ("BOOLEAN",),
    list: ("ARRAY",),
    dict: ("OBJECT",),
}


def _json_types(annotation: Any) -> tuple[str, ...] | None:
    """DuckDB json_type() values a required field may take; None = not checked here."""
    origin = typing.get_origin(annotation) or annotation
    if origin in (typing.Union, types.UnionType):
        allowed: list[str] = []
        for arg in typing.get_args(annotation):
            if arg is type(None):
                allowed.append("NULL")
                continue
            sub = _json_types(arg)
            if sub is None:
                return None
            allowed.extend(sub)
        return tuple(allowed)
    if origin is typing.Literal:
        return (
            ("VARCHAR",) if all(isinstance(a, str) for a in typing.get_args(annotation)) else None
        )
    if isinstance(origin, type) and hasattr(origin, "model_fields"):
        return ("OBJECT",)
    return _JSON_TYPES.get(origin)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _required_fields(model) -> list[tuple[str, tuple[str, ...] | None]]:
    return [
        (name, _json_types(f.annotation))
        for name, f in model.model_fields.items()
        if f.is_required()
    ]


def payload_types_sql(column: str = "payload") -> str:
    """One `json_type(payload, [paths])` per row: the payload is parsed once, not once per field."""
    branches = []
    for event_type, model in sorted(PAYLOAD_MODELS.items()):
        paths = ", ".join(_quote(f"$.{name}") for name, _ in _required_fields(model))
        branches.append(f"when {_quote(event_type)} then json_type({column}, [{paths}])")
    return "case event_type " + " ".join(branches) + " end"


def payload_ok_sql(types: str = "payload_types") -> str:
    """True when every required field has an allowed type; one CASE branch per event type, so a
    valid row (the common case) costs one comparison chain, not one branch per field."""
    branches = []
    for event_type, model in sorted(PAYLOAD_MODELS.items()):
        conditions = []
        for index, (_, allowed) in enumerate(_required_fields(model), start=1):
            if allowed:
                values = ", ".join(_quote(v) for v in allowed)
                conditions.append(f"coalesce({types}[{index}] in ({values}), false)")
            else:
                conditions.append(f"{types}[{index}] is not null")
        branches.append(f"when {_quote(event_type)} then {' and '.join(conditions) or 'true'}")
    return "case event_type " + " ".join(branches) + " end"


def payload_error_sql(types: str = "payload_types") -> str:
    """A SQL CASE returning the first payload problem for the row's event_type, else NULL."""
    branches: list[str] = []
    for event_type, model in sorted(PAYLOAD_MODELS.items()):
        for index, (name, allowed) in enumerate(_required_fields(model), start=1):
            kind = f"event_type = {_quote(event_type)}"
            branches.append(
                f"when {kind} and {types}[{index}] is null "
                f"then {_quote(f'payload.{name}: missing (required by {event_type})')}"
            )
            if allowed:
                values = ", ".join(_quote(v) for v in allowed)
                branches.append(
                    f"when {kind} and {types}[{index}] not in ({values}) "
                    f"then {_quote(f'payload.{name}: expected JSON type ' + '/'.join(allowed))}"
                    f" || ', got ' || {types}[{index}]"
                )
    return "case " + " ".join(branches) + " end"


def current_versions_sql() -> str:
    pairs = ", ".join(
        f"({_quote(t)}, {m.schema_version})" for t, m in sorted(PAYLOAD_MODELS.items())
    )
    return f"(values {pairs}) as current_versions(event_type, current_version)"
