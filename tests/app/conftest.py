"""Fixtures for the app tests: a BENCH_HOME in tmp_path holding a serving snapshot.

By default the snapshot is `fixture_snapshot.build_fixture_snapshot`. Set
`BENCH_APP_SNAPSHOT=/path/to/serve.duckdb` to run the same tests against a real published
snapshot instead (it is copied into tmp_path, never opened in place); tests that need the
fixture's planted rows (the HTML/JS payload, the known failure) then skip.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the helper modules beside this file are plain modules
    sys.path.insert(0, str(HERE))

from app_harness import ServeSnapshot  # noqa: E402
from fixture_snapshot import build_empty_snapshot, build_fixture_snapshot  # noqa: E402


@pytest.fixture
def bench_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "bench-home"
    home.mkdir()
    monkeypatch.setenv("BENCH_HOME", str(home))
    return home


@pytest.fixture
def serve_snapshot(bench_home: Path) -> ServeSnapshot:
    target = bench_home / "serve.duckdb"
    real = os.environ.get("BENCH_APP_SNAPSHOT")
    if real:
        shutil.copyfile(real, target)
        return ServeSnapshot(bench_home, target, None)
    return ServeSnapshot(bench_home, target, build_fixture_snapshot(target))


@pytest.fixture
def empty_snapshot(bench_home: Path) -> Path:
    return build_empty_snapshot(bench_home / "serve.duckdb")
