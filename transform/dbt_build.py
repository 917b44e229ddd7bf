"""How `bench` builds the dbt project: incremental models, unit tests apart, rescoring by lineage.

* A user's build runs the models and the data tests (grain and contracts), not the dbt unit
  tests: `bench test` (and `bench build --with-unit-tests`, and CI) runs those.
* Staging and per-verdict models are incremental (dbt_project/macros/incremental_events.sql).
  When the dbt project itself changed since a warehouse was last built (a new release, a model
  edited), the build is a `--full-refresh`, so an incremental table never keeps rows made by
  older SQL. The fingerprint of the project is kept beside the warehouse file.
* A rescore builds only the models that read a changed var and what is downstream of them
  (`models_reading_vars`, from dbt's manifest). A per-run incremental model that reads a var
  sees the change itself (macros/incremental_events.sql: `only_runs_with_new_events`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ingest.copies import copies_replaced
from transform import build_selection
from transform.dbt_runner import DbtError, NodeProgress, run_dbt
from transform.state import fingerprint_file, project_fingerprint, unpublished_file
from warehouse.lake import open_warehouse, warehouse_exists
from warehouse.paths import BenchPaths

NO_UNIT_TESTS = ["--exclude-resource-type", "unit_test"]
# The grain tests of the verdict-level tables (a scan of every verdict each): run by full
# builds (a changed project, `bench rebuild`) and CI, not by the incremental build of a batch,
# whose rows get their identity from stg_events (one row per event id by construction).
VERDICT_GRAIN_TESTS = ["--exclude", "tag:verdict_grain"]
CORRECTION_EVENT_TYPES = ("item_excluded", "verdict_superseded")


def corrections_loaded(warehouse_db: Path) -> int:
    """How many correction events the warehouse holds. A correction can change rows that no new
    event touches (an old verdict superseded, an item excluded in every run), which incremental
    models keyed on the ingest batch would never revisit; so a new one forces a full refresh.
    Corrections are rare, and the count is read from the event-type column only."""
    import duckdb

    if not warehouse_exists(warehouse_db):
        return 0
    try:
        with open_warehouse(warehouse_db, read_only=True) as con:
            types = ", ".join(f"'{t}'" for t in CORRECTION_EVENT_TYPES)
            row = con.execute(
                f"select count(*) from raw.events where event_type in ({types})"
            ).fetchone()
    except duckdb.CatalogException:  # no events loaded yet
        return 0
    return int(row[0]) if row else 0


def models_built_since_publish(warehouse_db: Path) -> set[str] | None:
    """The models dbt rebuilt since the last publish (None = unknown: publish every table)."""
    try:
        return set(json.loads(unpublished_file(warehouse_db).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


def mark_published(warehouse_db: Path) -> None:
    unpublished_file(warehouse_db).write_text("[]\n", encoding="utf-8")


def _record_built_models(paths: BenchPaths, warehouse_db: Path) -> None:
    """Add the models the last dbt invocation built (dbt's run_results.json, written even when
    the build failed part way) to the set the next publish re-copies."""
    known = models_built_since_publish(warehouse_db)
    if known is None:
        return  # already "everything"
    try:
        results = json.loads(
            (paths.dbt_dir / "target" / "run_results.json").read_text(encoding="utf-8")
        )["results"]
    except (OSError, ValueError, KeyError):
        unpublished_file(warehouse_db).unlink(missing_ok=True)  # unknown: everything
        return
    built = {
        r["unique_id"].split(".")[-1]
        for r in results
        if r["unique_id"].startswith(("model.", "seed.")) and r.get("status") == "success"
    }
    unpublished_file(warehouse_db).write_text(
        json.dumps(sorted(known | built)) + "\n", encoding="utf-8"
    )


def _needs_full_refresh(warehouse_db: Path, fingerprint: str) -> bool:
    marker = fingerprint_file(warehouse_db)
    return not marker.exists() or marker.read_text(encoding="utf-8").strip() != fingerprint


def dbt_build(
    paths: BenchPaths,
    *,
    warehouse_db: Path | None = None,
    dbt_vars: dict[str, Any] | None = None,
    select: Iterable[str] | None = None,
    with_unit_tests: bool = False,
    on_progress: NodeProgress | None = None,
) -> bool:
    """`dbt build`: full refresh when the project changed, unit tests only when asked. Without
    `select`, only the models downstream of the event types that arrived since the last build
    (transform/build_selection.py). Returns False when there was nothing to build."""
    db = warehouse_db or paths.warehouse_db
    # a correction, or a copy of an event replaced by one that wins under ingest/copies.py's
    # rule, changes rows no new event touches: either forces a full refresh, once
    fingerprint = (
        f"{project_fingerprint()} corrections={corrections_loaded(db)} "
        f"replaced={copies_replaced(db)}"
    )
    full = _needs_full_refresh(db, fingerprint)
    selected = list(select or [])
    complete = not selected  # a build of every model that needs it: it may move the cursor
    newest = build_selection.newest_raw_batch(db)
    if complete and not full:
        by_type = _selection_by_event_type(paths, db)
        if by_type == []:
            if with_unit_tests:
                dbt_unit_tests(paths, warehouse_db=db)
            return False
        selected = by_type or []
    command = ["build", *NO_UNIT_TESTS]
    if selected:
        command += ["--select", *selected]
    if complete and selected:
        command += VERDICT_GRAIN_TESTS
    if full:
        command.append("--full-refresh")
    try:
        run_dbt(paths, command, dbt_vars=dbt_vars or None, warehouse_db=db, on_progress=on_progress)
    finally:
        _record_built_models(paths, db)
    if full and complete:
        fingerprint_file(db).write_text(fingerprint + "\n", encoding="utf-8")
    elif full:  # a partial build leaves the other models as they were
        fingerprint_file(db).unlink(missing_ok=True)
    if complete:
        build_selection.write_cursor(db, newest)
    if with_unit_tests:
        dbt_unit_tests(paths, warehouse_db=db)
    return True


def _selection_by_event_type(paths: BenchPaths, db: Path) -> list[str] | None:
    """[] = nothing arrived since the last build; None = build everything (no cursor yet, no
    manifest); else the `--select` arguments for the event types that arrived."""
    cursor = build_selection.read_cursor(db)
    manifest = load_manifest(paths)
    if cursor is None or manifest is None:
        return None
    types = build_selection.event_types_since(db, cursor)
    if not types:
        return []
    try:
        return build_selection.selection_for(manifest, types)
    except KeyError:
        return None


def dbt_unit_tests(paths: BenchPaths, *, warehouse_db: Path | None = None) -> str:
    """Every dbt unit test (each scoring rule's), against the built warehouse's column types.
    Run apart from the build and without the active scoring vars: a unit test states the vars
    its rule needs (`overrides: vars`), and the active ones would take precedence over them
    (the scoring_var macro reads the environment first)."""
    db = warehouse_db or paths.warehouse_db
    if not warehouse_exists(db):
        raise DbtError(f"no warehouse at {db}: run `bench build` first")
    return run_dbt(paths, ["test", "--select", "test_type:unit"], warehouse_db=db, quiet=False)


# --- rescoring by lineage --------------------------------------------------------------------


def _mentions(text: str, names: Iterable[str]) -> bool:
    """A var is read by name: var('x'), number_var('x', ...), dbt.config.get("x"), a list of
    names... so any quoted occurrence of the name counts (over-selecting is safe)."""
    return any(re.search(rf"""['"]{re.escape(name)}['"]""", text) for name in names)


def models_reading_vars(manifest: dict[str, Any], names: Iterable[str]) -> list[str]:
    """Names of the models and seeds that read any of `names`, directly or through macros."""
    names = list(names)
    macros = manifest.get("macros", {})
    reading = {uid for uid, m in macros.items() if _mentions(m.get("macro_sql", ""), names)}
    changed = True
    while changed:  # macros calling macros that read the var
        changed = False
        for uid, macro in macros.items():
            if uid not in reading and reading & set(macro["depends_on"]["macros"]):
                reading.add(uid)
                changed = True
    found = []
    for node in manifest.get("nodes", {}).values():
        if node["resource_type"] not in ("model", "seed", "snapshot"):
            continue
        if node.get("package_name") != manifest["metadata"].get("project_name", "bench"):
            continue
        direct = _mentions(node.get("raw_code", ""), names)
        via_config = _mentions(json.dumps(node.get("unrendered_config", {})), names)
        via_macro = reading & set(node.get("depends_on", {}).get("macros", []))
        if direct or via_config or via_macro:
            found.append(node["name"])
    return sorted(found)


def load_manifest(paths: BenchPaths) -> dict[str, Any] | None:
    path = paths.dbt_dir / "target" / "manifest.json"
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None


def rescore_selection(paths: BenchPaths, changed_vars: Iterable[str]) -> list[str] | None:
    """`--select` arguments for a rescore: each model reading a changed var, with `+` (all that
    is downstream). None = build everything (no manifest yet, or a var no model reads)."""
    manifest = load_manifest(paths)
    changed = sorted(set(changed_vars))
    if manifest is None or not changed:
        return None
    models = models_reading_vars(manifest, changed)
    return [f"{name}+" for name in models] or None
