"""Publish is memory-bounded like the build (issue #26: a 1M-verdict publish peaked at 11.5-12.3
GB RSS with no limit): the warehouse connection takes the build's memory limit, threads and
spill folder from the dbt profile (BENCH_DBT_MEMORY_LIMIT), and a part's row groups are cut by
bytes so a small limit still completes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from warehouse.publish import duckdb_config, table_checksums

# Run in a fresh process: its peak RSS is the publish's (pytest's own memory would hide it).
# VmHWM, not ru_maxrss: Linux carries the parent's peak into a child's ru_maxrss across exec.
PUBLISH = """
import json, re, sys
from pathlib import Path
from warehouse import publish
publish.PART_MIN_ROWS = 1
tables = publish.publish_snapshot(Path(sys.argv[1]), Path(sys.argv[2]), {})
peak = re.search(r"VmHWM:\\s*(\\d+) kB", Path("/proc/self/status").read_text()).group(1)
print(json.dumps({"tables": tables, "rss_mb": int(peak) / 1024}))
"""


def test_settings_come_from_the_build_profile(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCH_DBT_TEMP_DIR", raising=False)
    monkeypatch.delenv("BENCH_DBT_DUCKDB_THREADS", raising=False)
    monkeypatch.setenv("BENCH_DBT_MEMORY_LIMIT", "700MB")
    config = duckdb_config(tmp_path / "warehouse.duckdb")
    # the build's spill folder under the data root, as bench gives it to dbt (transform/dbt_runner.py)
    assert config == {
        "memory_limit": "700MB",
        "threads": "2",
        "temp_directory": str(tmp_path.resolve() / "dbt" / "duckdb_tmp"),
        # new files in DuckDB's current format (tests/ingest/test_storage_format.py)
        "storage_compatibility_version": "latest",
    }
    monkeypatch.delenv("BENCH_DBT_MEMORY_LIMIT")
    assert duckdb_config(tmp_path / "warehouse.duckdb")["memory_limit"] == "3GB"


@pytest.mark.slow
def test_publish_stays_within_a_small_memory_limit(tmp_path):
    warehouse = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(warehouse), config={"memory_limit": "500MB"}) as con:
        con.execute("create schema marts")
        # 123 MB of poorly compressible payload text (64 md5s a row), as dim_events holds
        con.execute(
            "create table marts.dim_events as select 'e' || i as event_id, "
            "(select string_agg(md5(i::varchar || '-' || j::varchar), '') from range(64) r(j)) "
            "as payload from range(60000) t(i)"
        )
        con.execute("create table marts.leaderboard as select 'a' as system, 0.5 as score")
    serve = tmp_path / "serve.duckdb"
    env = {"BENCH_DBT_MEMORY_LIMIT": "150MB", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", PUBLISH, str(warehouse), str(serve)],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    # Without the limit's row-group cut the part's writer fails under 150 MB ("failed to
    # allocate"); without the limit publish holds the table in DuckDB's buffer (~590 MB here).
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["tables"] == ["marts.dim_events", "marts.leaderboard"]
    assert result["rss_mb"] < 420, result
    assert table_checksums(serve) == table_checksums(warehouse)
    assert (tmp_path / "dbt" / "duckdb_tmp").is_dir()  # the build's spill folder, made if new
