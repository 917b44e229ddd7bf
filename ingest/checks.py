"""Structural checks for log lines, run inside DuckDB so loading stays near `read_json` speed.

The checks are derived from the pydantic payload models, so the models stay the single
definition of every event's shape. Lines at an older schema version take the Python path
(upcast, then full pydantic validation) instead: they are rare.
"""

from __future__ import annotations

import itertools
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
    """`json_type(payload, [paths])` over the row's event type's required fields."""
    branches = []
    for event_type, model in sorted(PAYLOAD_MODELS.items()):
        paths = ", ".join(_quote(f"$.{name}") for name, _ in _required_fields(model))
        branches.append(f"when {_quote(event_type)} then json_type({column}, [{paths}])")
    return "case event_type " + " ".join(branches) + " end"


# Above this many combinations of allowed types, a payload check falls back to a regex.
MAX_TYPE_COMBINATIONS = 256


def _field_types_ok(types: str, fields: list[tuple[str, tuple[str, ...] | None]]) -> str:
    """SQL true when the list `types` (one `json_type` per required field) is acceptable.

    `types` is referenced exactly once: DuckDB inlines a derived column at each reference, so
    a check per field would re-run `json_type` (a parse of the payload) once per field.
    """
    if all(allowed is not None for _, allowed in fields):
        combinations = list(itertools.product(*(allowed for _, allowed in fields)))
        if len(combinations) <= MAX_TYPE_COMBINATIONS:
            lists = ", ".join(
                "[" + ", ".join(_quote(t) for t in combination) + "]"
                for combination in combinations
            )
            # list_contains over a constant list is far cheaper than IN or a regex here.
            return f"coalesce(list_contains([{lists}], {types}), false)"
    # A missing field is NULL in the list and dropped by array_to_string, so it fails the
    # match by leaving too few entries.
    pattern = ",".join(
        "[^,]+" if allowed is None else "(?:" + "|".join(allowed) + ")" for _, allowed in fields
    )
    return f"regexp_full_match(coalesce(array_to_string({types}, ','), ''), {_quote(pattern)})"


def payload_ok_sql(column: str = "payload") -> str:
    """True when every required field is present with an allowed JSON type; the payload is
    parsed once per row."""
    branches = []
    for event_type, model in sorted(PAYLOAD_MODELS.items()):
        fields = _required_fields(model)
        if not fields:
            branches.append(f"when {_quote(event_type)} then true")
            continue
        paths = ", ".join(_quote(f"$.{name}") for name, _ in fields)
        check = _field_types_ok(f"json_type({column}, [{paths}])", fields)
        branches.append(f"when {_quote(event_type)} then {check}")
    return "case event_type " + " ".join(branches) + " end"


def payload_error_sql(types: str = "payload_types") -> str:
    """A SQL CASE returning the first payload problem for the row's event_type, else NULL.

    Evaluated only for rows that failed `payload_ok_sql`, so its many references to the types
    list cost nothing on valid rows."""
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


def current_version_sql() -> str:
    """The current schema version of the row's event_type (NULL when unknown), as one CASE."""
    branches = " ".join(
        f"when {_quote(t)} then {m.schema_version}" for t, m in sorted(PAYLOAD_MODELS.items())
    )
    return f"case event_type {branches} end"


# Envelope fields as `json_transform` reads them; a JSON field comes back as minified JSON text.
ENVELOPE_STRUCT = (
    '{"event_id":"VARCHAR","event_type":"VARCHAR","schema_version":"BIGINT","run_id":"VARCHAR",'
    '"occurred_at":"VARCHAR","producer":"JSON","payload":"JSON","content_sha256":"VARCHAR",'
    '"prev_sha256":"VARCHAR"}'
)

# (condition that makes a line bad, its reason), first match wins. `versioned` checks need the
# row's current_version; the first pass folds them into `schema_version = current_version`.
_ENVELOPE_CHECKS: list[tuple[str, str, bool]] = [
    (
        f"event_id is null or not regexp_matches(event_id, '{UUID_RE}')",
        "'event_id: missing or not a uuid'",
        False,
    ),
    ("event_type is null", "'event_type: missing'", False),
    ("current_version is null", "'event_type: unknown ' || event_type", True),
    ("schema_version is null", "'schema_version: missing or not an integer'", False),
    (
        "schema_version > current_version",
        "'schema_version ' || schema_version || ' is newer than this code (' "
        "|| current_version || ')'",
        True,
    ),
    ("run_id is null", "'run_id: missing'", False),
    (
        "try_cast(occurred_at as timestamptz) is null",
        "'occurred_at: missing or not an ISO-8601 timestamp'",
        False,
    ),
    ("producer is null or left(producer, 1) <> '{'", "'producer: missing or not an object'", False),
    ("payload is null or left(payload, 1) <> '{'", "'payload: missing or not an object'", False),
    (
        f"content_sha256 is null or not regexp_matches(content_sha256, '{SHA_RE}')",
        "'content_sha256: missing or not a sha256'",
        False,
    ),
    (
        f"prev_sha256 is null or not regexp_matches(prev_sha256, '{SHA_RE}')",
        "'prev_sha256: missing or not a sha256'",
        False,
    ),
]


def _envelope_sql(lines: str) -> str:
    # TRY turns malformed JSON into a NULL struct; json_transform gives NULL fields for a JSON
    # value that is not an object, and the first byte tells those apart.
    return f"""
        select line_no, line,
               envelope is not null and left(ltrim(line), 1) = '{{' as is_object,
               unnest(envelope)
        from (select line_no, line, try(json_transform(line, '{ENVELOPE_STRUCT}')) as envelope
              from {lines})
    """


def loadable_sql(lines: str = "batch") -> str:
    """First pass, over every line: the envelope fields and `loadable`, true when the line passes
    every check at the current schema version. Each line is parsed once, and its payload once
    more for the required fields' types. A NULL anywhere makes a line not loadable, which only
    sends it to `quarantine_sql` for its exact reason."""
    checks = " and ".join(f"not ({bad})" for bad, _, versioned in _ENVELOPE_CHECKS if not versioned)
    return f"""
        select * exclude (is_object, line),
               coalesce(is_object and {checks}
                        and schema_version = {current_version_sql()}
                        and {payload_ok_sql()}, false) as loadable
        from ({_envelope_sql(lines)})
    """


def quarantine_sql(lines: str = "rest") -> str:
    """Second pass, over the lines the first pass did not load (bad or older versions): the
    first reason each line is bad, NULL for a well-formed line at an older version."""
    reasons = " ".join(f"when {bad} then {reason}" for bad, reason, _ in _ENVELOPE_CHECKS)
    return f"""
        select *,
            case
                when not is_object
                    then case when json_valid(line) then 'not a JSON object' else 'not valid JSON' end
                {reasons}
                when schema_version < current_version then null
                when {payload_ok_sql()} then null
                else {payload_error_sql()}
            end as error
        from (
            select envelope.*, current_version, {payload_types_sql()} as payload_types
            from ({_envelope_sql(lines)}) as envelope
            left join {current_versions_sql()} using (event_type)
        )
    """
