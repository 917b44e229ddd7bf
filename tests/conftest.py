"""Shared fixtures: hermetic data roots, the shared datasets, the one fixture warehouse."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import hypothesis
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(
    os.environ.get("BENCH_DATA_DIR") or REPO_ROOT.parent / "shared" / "data"
).resolve()

# dlt and dbt must never phone home or touch machine-global state from tests.
os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")

# Property tests assert what holds, not how fast an example is drawn: the suite runs a worker per
# core beside dbt builds, and a timing health check then fails a test whose property held (seen:
# test_shard's unique text lists, too_slow, on a loaded machine).
hypothesis.settings.register_profile(
    "bench", deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow]
)
hypothesis.settings.load_profile("bench")


@pytest.fixture
def bench_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "bench-home"
    monkeypatch.setenv("BENCH_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.fail(f"shared datasets not found at {SHARED_DATA}; set BENCH_DATA_DIR")
    return SHARED_DATA


@pytest.fixture(scope="session")
def fixture_warehouse(tmp_path_factory):
    """Every dbt family's fixture events, one `dbt build` per session for all xdist workers
    (tests/dbt/fixture_warehouse.py)."""
    # its helpers (tests/dbt and the QA and DRACO fixtures) are imported by plain name
    for helpers in ("dbt", "dbt_qa", "dbt_draco"):
        if str(REPO_ROOT / "tests" / helpers) not in sys.path:
            sys.path.insert(0, str(REPO_ROOT / "tests" / helpers))
    from fixture_warehouse import shared

    return shared(tmp_path_factory)


@pytest.fixture(scope="session", autouse=True)
def _streamlit_scans_installed_packages_once():
    """Every AppTest run scans the metadata of every installed distribution for Streamlit
    components (streamlit/components/v2/manifest_scanner.py): ~0.7 s a run here, most of an app
    test's time, for an answer that cannot change during the session (the app ships no
    component). A served app scans once at start; the tests now do too."""
    scanner = sys.modules.get("streamlit.components.v2.manifest_scanner")
    if scanner is None:
        try:
            from streamlit.components.v2 import manifest_scanner as scanner
        except ImportError:  # a streamlit without v2 components: nothing to scan
            yield
            return
    scan = scanner.scan_component_manifests
    found = scan()
    scanner.scan_component_manifests = lambda max_workers=None: list(found)
    yield
    scanner.scan_component_manifests = scan


# Longest first (LPT scheduling): scripts/test passes --no-loadscope-reorder, so xdist's
# loadfile hands out files in this order; otherwise it would hand out the files with the most
# tests first and the one-test files that each take a minute or more (a pipeline per test, pip
# install, random sequences) would come last, with one worker busy and the other idle. The
# order is from `scripts/test --durations=120` on an idle 2-core machine (seconds per file,
# setup included); files not listed follow in collection order.
_SLOWEST_FILES = (
    "tests/lake/test_lake_team.py",
    "tests/sequences/test_sequences.py",
    "tests/integration/test_pip_install.py",
    "tests/integration/test_incremental_builds.py",
    "tests/integration/test_end_to_end.py",
    "tests/integration/test_secrets_canary.py",
    "tests/cli/test_rescore_noop.py",
    "tests/app/test_demo_browser.py",
    "tests/dbt_draco/test_draco_oracle.py",
    "tests/app/test_real_pages.py",
    "tests/app/test_imported_costs_pages.py",
    "tests/reliability/test_published_head.py",
    "tests/integration/test_draco_end_to_end.py",
    "tests/reliability/test_input_guards.py",
    "tests/dbt/test_marts_e2e.py",
    # after the demo browser sweep, whose demo data root it loads (tests/demo_home.py): started
    # first, it would wait for that build
    "tests/lake/test_lake_local.py",
    "tests/live_extraction/test_live_marts.py",
    "tests/ingest/test_killed_ingest.py",
    "tests/dbt/test_incremental_no_reappend.py",
    "tests/app/test_run_compare.py",
)


def _cost_rank(item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return _SLOWEST_FILES.index(path) if path in _SLOWEST_FILES else len(_SLOWEST_FILES)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_cost_rank)


def pytest_terminal_summary(terminalreporter):
    """Print what the sequence test tried (tests/sequences/test_sequences.py) at the end of the
    run. Here, in the root conftest, because under xdist only the controller prints and it loads
    this conftest alone: a worker's output is not shown, so the summary travels as a user
    property of the test's report."""
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for name, value in getattr(report, "user_properties", ()):
                if name == "sequence summary":
                    terminalreporter.write_sep("-", f"{report.nodeid}")
                    terminalreporter.write_line(str(value))
