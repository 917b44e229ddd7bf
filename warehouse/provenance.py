"""Who produced an event: package version, git revision and a hash of the effective config."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path
from typing import Any

from warehouse import __version__
from warehouse.canonical import canonical_sha256
from warehouse.events import Producer

_REPO_ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def git_sha() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(_REPO_ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
        sha = out.stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(_REPO_ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        return f"{sha}-dirty" if dirty else sha
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def producer_for(config: Any) -> Producer:
    return Producer(
        package_version=__version__, git_sha=git_sha(), config_sha256=canonical_sha256(config)
    )
