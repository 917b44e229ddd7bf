"""Every file the build engine keeps between commands, in one place.

Beside each warehouse file (`warehouse.duckdb`, or a rebuild's fresh copy), so a rebuild carries
them with the file it replaces:

* `<db>.dbt-project.sha256`: the fingerprint of the dbt project the file was last built with; a
  different one means a `--full-refresh` (transform/dbt_build.py).
* `<db>.built-through`: dlt's load id of the newest raw batch a complete build has seen; the next
  build runs only what the event types since then feed (transform/build_selection.py).
* `<db>.unpublished.json`: the models built since the last publish, which the next publish
  re-copies; missing = unknown, publish every table (transform/dbt_build.py, pipeline.publish).

In the data root: `scoring.json`, the active scoring vars every build uses (written by
`bench rescore` once a build has accepted them; `BenchPaths.scoring_file`).

Beside the dbt project, shared by every data root: `dbt_project/.parse-cache/`, dbt's saved
parse (transform/dbt_parse_cache.py). dbt's own `target/` and `logs/` live under
`BenchPaths.dbt_dir`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from warehouse import bounded_json
from warehouse.paths import BenchPaths

# The same folder warehouse.scoring_vars reads: dbt_project/ ships beside the packages.
from warehouse.scoring_vars import DBT_PROJECT_DIR

PARSE_CACHE_DIR = DBT_PROJECT_DIR / ".parse-cache"


def fingerprint_file(warehouse_db: Path) -> Path:
    return warehouse_db.with_name(warehouse_db.name + ".dbt-project.sha256")


def cursor_file(warehouse_db: Path) -> Path:
    return warehouse_db.with_name(warehouse_db.name + ".built-through")


def unpublished_file(warehouse_db: Path) -> Path:
    return warehouse_db.with_name(warehouse_db.name + ".unpublished.json")


# What a rebuild moves onto the warehouse it replaces (the unpublished list is dropped instead:
# a new file means publish everything).
CARRIED_BY_REBUILD = (fingerprint_file, cursor_file)


def load_scoring_vars(paths: BenchPaths) -> dict[str, Any]:
    if not paths.scoring_file.exists():
        return {}
    try:
        return bounded_json.loads(paths.scoring_file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{paths.scoring_file}: not valid JSON ({exc}); fix or delete it") from exc


def save_scoring_vars(paths: BenchPaths, scoring: dict[str, Any]) -> None:
    tmp = paths.scoring_file.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(scoring, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, paths.scoring_file)


_PROJECT_PARTS = ("dbt_project.yml", "profiles.yml", "models", "macros", "seeds", "tests")


def project_fingerprint(project_dir: Path = DBT_PROJECT_DIR) -> str:
    """sha256 over every file of the dbt project that decides what a model holds."""
    digest = hashlib.sha256()
    for part in _PROJECT_PARTS:
        root = project_dir / part
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for path in files:
            if path.exists() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(project_dir)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()
