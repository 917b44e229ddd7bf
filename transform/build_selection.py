"""Which models a build must run: those downstream of the event types that arrived since the
last complete build (issue #8).

Every staging model reads one event type (`stg_events__<type>`); the few other models that read
`stg_events` directly say which types they read in `meta.event_types` (none said = every type).
A batch of judge verdicts therefore rebuilds the DRACO models and `dim_events`, not the QA and
extraction models whose inputs did not change. The cursor is dlt's load id of the newest raw
batch a complete build has seen, kept beside the warehouse file; without it (a first build, a
raw table written without dlt) everything is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from transform.state import cursor_file
from warehouse.lake import open_warehouse, warehouse_exists

STAGING_ROOT = "stg_events"
STAGING_PREFIX = f"{STAGING_ROOT}__"


def newest_raw_batch(warehouse_db: Path) -> str | None:
    """dlt's newest `_dlt_load_id` in raw.events (None: no dlt-loaded events)."""
    import duckdb

    if not warehouse_exists(warehouse_db):
        return None
    try:
        with open_warehouse(warehouse_db, read_only=True) as con:
            row = con.execute("select max(_dlt_load_id) from raw.events").fetchone()
    except duckdb.Error:  # no raw.events yet, or a raw table written without dlt
        return None
    return row[0] if row else None


def event_types_since(warehouse_db: Path, cursor: str) -> set[str]:
    with open_warehouse(warehouse_db, read_only=True) as con:
        rows = con.execute(
            "select distinct event_type from raw.events where _dlt_load_id > ?", [cursor]
        ).fetchall()
    return {event_type for (event_type,) in rows}


def read_cursor(warehouse_db: Path) -> str | None:
    try:
        return cursor_file(warehouse_db).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def write_cursor(warehouse_db: Path, cursor: str | None) -> None:
    if cursor is None:
        cursor_file(warehouse_db).unlink(missing_ok=True)
    else:
        cursor_file(warehouse_db).write_text(cursor + "\n", encoding="utf-8")


def event_types_read(node: dict[str, Any]) -> set[str] | None:
    """The event types a direct reader of stg_events reads (None = every type)."""
    name = node["name"]
    if name.startswith(STAGING_PREFIX):
        return {name.removeprefix(STAGING_PREFIX)}
    declared = (node.get("meta") or node.get("config", {}).get("meta") or {}).get("event_types")
    return set(declared) if declared is not None else None


def selection_for(manifest: dict[str, Any], event_types: set[str]) -> list[str]:
    """`--select` arguments: stg_events, and each direct reader of it that reads one of
    `event_types`, with everything downstream."""
    root = next(
        (uid for uid, n in manifest["nodes"].items() if n.get("name") == STAGING_ROOT), None
    )
    if root is None:
        raise KeyError(f"no {STAGING_ROOT} model in the manifest")
    selected = [STAGING_ROOT]
    for child in manifest["child_map"].get(root, []):
        node = manifest["nodes"].get(child)
        if node is None or node["resource_type"] != "model":
            continue
        reads = event_types_read(node)
        if reads is None or reads & event_types:
            selected.append(f"{node['name']}+")
    return selected
