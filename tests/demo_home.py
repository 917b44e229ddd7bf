"""The data root `bench demo --no-serve --no-reference` makes, built once per pytest session for
every test that needs the whole demo (tests/shared_build.py): the app's browser sweep serves it,
the lake tests load its log. Readers must not write into it; copy what you change."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench_cli import run_bench
from tests.shared_build import built_once


def _build(home: Path) -> Path:
    # The reference engines need the shared benchmark on disk, which CI may not have; they feed
    # no page and no mart family that the demo's own corpus does not.
    proc = run_bench(home, "demo", "--no-serve", "--no-reference", check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return home


def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_once(tmp_path_factory, "demo-home", _build)
