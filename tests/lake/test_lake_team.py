"""The warehouse on a team's lake (issue #29): a PostgreSQL catalog and S3 data, both on loopback
(tests/lake/services.py), with the demo's own log. One setting moves it; then ingest, build,
publish, sql, status and rescore work against it, and:

* every mart equals the demo's local build of the same events, row for row (tests/lake/marts.py);
* a reader in another process reads the leaderboard while a build rewrites it: no error, and
  never a missing or half-written table;
* a rule the lake cannot enforce as a CHECK still fails the build that breaks it;
* neither the catalog's password nor the S3 secret reaches a file of the data root.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import duckdb
import pytest

from tests.bench_cli import bench_env, run_bench
from tests.demo_home import demo_home
from tests.lake import services
from tests.lake.marts import mart_differences
from transform.dbt_runner import DbtError, run_dbt
from warehouse.lake import lake_target, open_warehouse
from warehouse.paths import BenchPaths

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        services.postgres_bin() is None,
        reason="PostgreSQL is not installed (apt-get install postgresql)",
    ),
]

CATALOG_PASSWORD = "pg-canary-4f1e9a"  # trust authentication accepts it, and must not keep it
S3_SECRET = "s3-canary-7c2d05"  # moto accepts any key


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, dict]]:
    demo = demo_home(tmp_path_factory)
    with ExitStack() as stack:
        catalog = stack.enter_context(services.postgres())
        store = stack.enter_context(services.s3())
        url = services.create_database(catalog, "lake")
        bucket = store.bucket("bench-lake")
        env = {
            "BENCH_WAREHOUSE": "ducklake:postgres:"
            + url.replace("bench@", f"bench:{CATALOG_PASSWORD}@"),
            "BENCH_LAKE_DATA": f"{bucket}/team",
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": S3_SECRET,
            "AWS_ENDPOINT_URL": store.endpoint,
        }
        root = tmp_path_factory.mktemp("team-root")
        shutil.copytree(demo / "log", root / "log")
        shutil.copy(demo / "heads.jsonl", root / "heads.jsonl")
        run_bench(root, "ingest", env=env)
        run_bench(root, "build", env=env)
        assert any(key.endswith(".parquet") for key in store.keys("bench-lake", "team/raw/"))
        yield demo, root, env


@pytest.fixture
def on_the_lake(team, monkeypatch) -> dict[str, str]:
    """This process's environment pointed at the lake (for in-process reads and dbt calls)."""
    _, _, env = team
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def test_every_mart_equals_the_local_build_of_the_same_events(team, on_the_lake) -> None:
    demo, _, _ = team
    assert lake_target() is not None and lake_target().in_s3
    with open_warehouse(Path("unused"), read_only=True) as con:
        con.execute(f"attach '{demo / 'warehouse.duckdb'}' as loc (read_only)")
        events = "select event_id, event_type, payload from {}.raw.events order by event_id"
        assert (
            con.execute(events.format("warehouse")).fetchall()
            == con.execute(events.format("loc")).fetchall()
        )
        assert mart_differences(con, "warehouse", "loc") == {}
        (marts,) = con.execute(
            "select count(*) from information_schema.tables "
            "where table_catalog = 'warehouse' and table_schema = 'marts'"
        ).fetchone()
        assert marts > 30


def test_publish_serves_the_lake_and_rescore_rebuilds_on_it(team) -> None:
    demo, root, env = team
    # publish copies the lake's marts into the data root's snapshot, which the app, `bench sql`
    # and `bench export` read as they read a local build's; it records the lake's snapshot
    run_bench(root, "publish", env=env)
    board = "select lane, round(score_mean, 9) from marts.draco_leaderboard order by all"
    served = run_bench(root, "sql", board, "--format", "csv", env=env).stdout
    assert served == run_bench(demo, "sql", board, "--format", "csv").stdout
    assert served.count("\n") > 2
    with duckdb.connect(str(root / "serve.duckdb"), read_only=True) as con:
        (metadata,) = con.execute("select metadata from main._publish").fetchone()
    lake = json.loads(metadata)["lake"]
    assert lake["snapshot_id"] > 0
    assert lake["catalog"] == env["BENCH_WAREHOUSE"].replace(f":{CATALOG_PASSWORD}@", "@")
    with duckdb.connect(str(demo / "warehouse.duckdb"), read_only=True) as con:
        (events,) = con.execute("select count(*) from raw.events").fetchone()
    status = run_bench(root, "status", env={**env, "COLUMNS": "400"}).stdout  # a row a line
    assert f"{events} events loaded, 0 quarantined (on the lake {lake['catalog']})" in status
    # rescore rebuilds what the weights feed, on the lake, and republishes
    run_bench(root, "rescore", "--weights", "completeness=1", env=env)
    composites = _leaderboard(env, "composite")
    assert len(composites) > 2
    assert composites == pytest.approx(_leaderboard(env, "completeness"))
    # what the lake cannot do yet is refused, naming why, and nothing local is made instead
    refused = run_bench(root, "rebuild", env=env, check=False)
    assert refused.returncode == 2 and "not supported yet" in refused.output, refused.output
    assert not (root / "warehouse.duckdb").exists()


def _leaderboard(env: dict[str, str], column: str) -> dict[str, float]:
    reader = subprocess.run(
        [sys.executable, "-c", _READ.format(column=column)],
        env=bench_env(None, env),
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(reader.stdout))


_READ = textwrap.dedent(
    """
    import json, pathlib
    from warehouse.lake import open_warehouse
    with open_warehouse(pathlib.Path("unused"), read_only=True) as con:
        rows = con.execute(
            "select run_id || '/' || system, {column} from marts.extraction_leaderboard"
        ).fetchall()
    print(json.dumps(rows))
    """
)

_POLL = textwrap.dedent(
    """
    import json, os, pathlib, sys, time
    from warehouse.lake import open_warehouse
    stop, counts, errors = pathlib.Path(sys.argv[1]), [], []
    while not stop.exists() or not counts:
        try:
            with open_warehouse(pathlib.Path("unused"), read_only=True) as con:
                counts.append(
                    con.execute("select count(*) from marts.extraction_leaderboard").fetchone()[0]
                )
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}"[:300])
        time.sleep(0.05)
    print(json.dumps({"counts": counts, "errors": errors}))
    """
)


def test_a_reader_in_another_process_reads_while_a_build_runs(team, tmp_path) -> None:
    _, root, env = team
    expected = len(_leaderboard(env, "composite"))
    stop = tmp_path / "stop"
    reader = subprocess.Popen(
        [sys.executable, "-c", _POLL, str(stop)],
        env=bench_env(None, env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        run_bench(root, "rescore", "--weights", "completeness=0.5,success=0.5", env=env)
    finally:
        stop.touch()
        out, err = reader.communicate(timeout=120)
    polls = json.loads(out)
    assert polls["errors"] == [], polls["errors"][:3]
    assert len(polls["counts"]) > 5, err
    assert set(polls["counts"]) == {expected}  # never missing, never half written


def test_a_check_the_lake_cannot_enforce_still_fails_the_build(team, on_the_lake) -> None:
    _, root, _ = team
    # An item score out of [0, 1] upstream: locally the mart's CHECK refuses it when DuckDB
    # writes the table; DuckLake has no CHECK, so the mart's post-hook must refuse it instead.
    with open_warehouse(Path("unused")) as con:
        (changed,) = con.execute(
            "update intermediate.int_draco_items_scored set score = 7 "
            "where item_id = (select min(item_id) from intermediate.int_draco_items_scored)"
        ).fetchone()
    assert changed > 0
    with pytest.raises(DbtError) as failed:  # the mart alone, over the changed upstream row
        run_dbt(BenchPaths(root), ["run", "--select", "fct_draco_items"])
    # ... naming the mart, the column and the rule
    assert "contract check failed on the lake: fct_draco_items.score: score between 0 and 1" in (
        str(failed.value)
    ), str(failed.value)[-3000:]


def test_no_credential_reaches_a_file_of_the_data_root(team) -> None:
    _, root, _ = team
    found = [
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file()
        and any(secret.encode() in path.read_bytes() for secret in (CATALOG_PASSWORD, S3_SECRET))
    ]
    assert found == []
    assert os.environ.get("AWS_SECRET_ACCESS_KEY") != S3_SECRET  # only the commands had it
