"""dbt's saved parse, shared by every data root that runs this project.

dbt parses the whole project on each call (`dbt parse` 5.7 s here, 2.9 s from a saved parse:
benchmarks/first_build.py) unless
`target/partial_parse.msgpack` is there and still fits: the same dbt version, project files,
`--vars` and connection settings (dbt-core `parser/manifest.py`, `build_manifest_state_check`).
A new data root has no target yet, so its first build always paid the full parse.

The connection settings include the DuckDB path, so bench runs dbt from the data root with the
paths inside it relative (`dbt_runner.dbt_env`): the saved parse of one root then fits every
other. It is kept beside the project, like `__pycache__` beside a module, one file per set of
inputs dbt checks, copied into a root's target before dbt starts and back after a call that
parsed. dbt still checks what it loads: a stale file costs the full parse, never a wrong build.
Where the project folder is read-only (a system install) nothing is kept and nothing fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from importlib.metadata import version
from pathlib import Path

from transform.state import DBT_PROJECT_DIR, PARSE_CACHE_DIR

SAVED_PARSE = "partial_parse.msgpack"
CACHE_DIR = PARSE_CACHE_DIR
# About 2 MB each; a user's builds need one, each distinct --vars of a unit-test run another.
KEPT = 16


def _profile_env_names(project_dir: Path) -> list[str]:
    """The environment variables profiles.yml reads: their values are the connection settings."""
    text = (project_dir / "profiles.yml").read_text(encoding="utf-8")
    return sorted(set(re.findall(r"env_var\(\s*['\"](\w+)['\"]", text)))


def cached_parse(env: dict[str, str], args: list[str], project_dir: Path = DBT_PROJECT_DIR) -> Path:
    """The cache file for one set of the inputs dbt checks before reusing a parse."""
    cli_vars = args[args.index("--vars") + 1] if "--vars" in args else ""
    key = json.dumps(
        [
            version("dbt-core"),
            str(project_dir.resolve()),
            cli_vars,
            {name: env.get(name) for name in _profile_env_names(project_dir)},
        ]
    )
    return CACHE_DIR / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.msgpack"


def restore(target_dir: Path, cached: Path) -> None:
    """Give a target with no saved parse the cached one."""
    if not (target_dir / SAVED_PARSE).exists() and cached.exists():
        target_dir.mkdir(parents=True, exist_ok=True)
        _copy_atomically(cached, target_dir / SAVED_PARSE)


def save(target_dir: Path, cached: Path) -> None:
    """Keep the target's saved parse when dbt wrote a newer one than the cache holds."""
    saved = target_dir / SAVED_PARSE
    if not saved.exists():
        return
    if cached.exists() and cached.stat().st_mtime >= saved.stat().st_mtime:
        return
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        _copy_atomically(saved, cached)
        _keep_newest(cached.parent)
    except OSError:
        pass  # a read-only install: every new root parses in full, as before


def _keep_newest(folder: Path) -> None:
    by_age = sorted(folder.glob("*.msgpack"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in by_age[KEPT:]:
        old.unlink(missing_ok=True)


def _copy_atomically(source: Path, destination: Path) -> None:
    # another dbt may read the destination at any moment (xdist workers, two data roots)
    fd, tmp = tempfile.mkstemp(dir=destination.parent, prefix=f".{destination.name}.")
    os.close(fd)
    try:
        shutil.copy2(source, tmp)
        os.replace(tmp, destination)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
