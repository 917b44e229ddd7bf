"""Fixtures for the app tests: a BENCH_HOME in tmp_path holding a serving snapshot.

By default the snapshot is `fixture_app_snapshot.build_app_snapshot` (real events, real dbt
build), built once per pytest process and copied into each test. Set
`BENCH_APP_SNAPSHOT=/path/to/serve.duckdb` to run the same tests against another published
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
from fixture_app_snapshot import AppSnapshot, app_snapshot, install, install_empty  # noqa: E402


@pytest.fixture
def bench_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "bench-home"
    home.mkdir()
    monkeypatch.setenv("BENCH_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def app_source(tmp_path_factory: pytest.TempPathFactory) -> AppSnapshot:
    return app_snapshot(tmp_path_factory)


@pytest.fixture
def serve_snapshot(bench_home: Path, request: pytest.FixtureRequest) -> ServeSnapshot:
    target = bench_home / "serve.duckdb"
    real = os.environ.get("BENCH_APP_SNAPSHOT")
    if real:
        shutil.copyfile(real, target)
        return ServeSnapshot(bench_home, target, None)
    source = request.getfixturevalue("app_source")  # only built when no snapshot is given
    return ServeSnapshot(bench_home, install(source, target), source)


@pytest.fixture
def empty_snapshot(bench_home: Path, app_source: AppSnapshot) -> Path:
    return install_empty(app_source, bench_home / "serve.duckdb")
