"""Expensive fixtures (a pipeline run, a dbt build, a published snapshot) built once per pytest
session and shared by every xdist worker (issue #10: the suite built the same snapshot once per
worker, each build a full dbt run).

Without xdist the build goes into this process's temp dir. Under xdist the first worker that
asks builds into a directory every worker sees (the parent of each worker's basetemp), behind a
file lock; the others wait, then read the pickled result, written last, so its presence means
the build finished. A build that raised leaves its traceback, and the other workers fail with it
instead of building again. Tests must not change what the build wrote: they copy it first
(each snapshot module's `install`).
"""

from __future__ import annotations

import os
import pickle
import shutil
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")

_RESULT = "built.pickle"
_FAILURE = "build-failed.txt"
_IN_PROCESS: dict[str, object] = {}


class SharedBuildFailed(RuntimeError):
    pass


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]
) -> T:
    """`build(empty directory)` once per session for all workers; its (picklable) result."""
    if name not in _IN_PROCESS:
        if "PYTEST_XDIST_WORKER" in os.environ:
            _IN_PROCESS[name] = _built_by_one_worker(tmp_path_factory, name, build)
        else:
            _IN_PROCESS[name] = build(tmp_path_factory.mktemp(name))
    return _IN_PROCESS[name]  # type: ignore[return-value]


def _built_by_one_worker(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]
) -> T:
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp().parent / name
    with FileLock(f"{root}.lock"):
        if (root / _FAILURE).exists():
            raise SharedBuildFailed(
                f"{name}: the shared build failed in another worker:\n"
                + (root / _FAILURE).read_text(encoding="utf-8")
            )
        if (root / _RESULT).exists():
            return pickle.loads((root / _RESULT).read_bytes())
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        try:
            result = build(root)
        except Exception:
            (root / _FAILURE).write_text(traceback.format_exc(), encoding="utf-8")
            raise
        (root / _RESULT).write_bytes(pickle.dumps(result))
        return result
