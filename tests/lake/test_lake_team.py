"""The warehouse on a team's lake (issue #29): a PostgreSQL catalog and S3 data, both on loopback
(tests/lake/services.py). Two machines collect one DRACO run split in shards (1/2 and 2/2) and
an extraction run, and load into the lake at the same moment. One setting moves the warehouse;
then ingest, build, publish, sql, status and rescore work against it, and:

* nothing is lost or doubled, and the split run is finished once both shards are;
* every mart equals a local build of the same events, row for row (tests/lake/marts.py);
* a reader in another process reads the leaderboard while a rescore rebuilds it, and another
  machine loads: no error, never a missing or half-written table, every loaded event once;
* a rule the lake cannot enforce as a CHECK still fails the build that breaks it;
* neither the catalog's password nor the S3 secret reaches a file of the data root;
* both machines push their logs to an S3 bucket (the log in object storage), and a machine that
  collected nothing loads every log from there: the lake's events, each once.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NamedTuple

import duckdb
import pytest

from tests.bench_cli import BENCH, bench_env, run_bench
from tests.lake import services
from tests.lake.marts import mart_differences
from tests.log_files import item_events
from transform.dbt_runner import DbtError, run_dbt
from warehouse.lake import builder_lock, lake_target, open_warehouse
from warehouse.log import EventLog
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
def servers() -> Iterator[tuple[services.Postgres, services.S3]]:
    with ExitStack() as stack:
        catalog = stack.enter_context(services.postgres())
        store = stack.enter_context(services.s3())
        store.bucket("bench-lake")
        yield catalog, store


def lake_env(servers, database: str) -> dict[str, str]:
    """The setting of a new lake: its catalog a new database, its data a new prefix."""
    catalog, store = servers
    url = services.create_database(catalog, database)
    return {
        "BENCH_WAREHOUSE": "ducklake:postgres:"
        + url.replace("bench@", f"bench:{CATALOG_PASSWORD}@"),
        "BENCH_LAKE_DATA": f"s3://bench-lake/{database}",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": S3_SECRET,
        "AWS_ENDPOINT_URL": store.endpoint,
    }


class Team(NamedTuple):
    single: Path  # a single-machine build of the events the lake holds
    root: Path  # the data root of the machine that builds
    env: dict[str, str]  # the lake's setting
    machines: list[Path]  # every collecting machine's data root


# One DRACO run split across two machines, and a second family on one of them.
DRACO_RUN = (
    *("run", "draco", "--tasks", "demo", "--systems", "local-rag,closed-book-research"),
    *("--judge", "offline", "--samples", "1", "--no-preflight", "--no-score"),
)
EXTRACTION_RUN = (
    *("run", "extraction", "--corpus", "demo", "--limit", "5", "--no-score"),
    *("--engines", "trafilatura,readability-lxml,html-text"),
)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory, servers) -> Team:
    """Two machines collect (shards 1/2 and 2/2 of one run, plus a second family), load into
    one lake at the same moment, and the first builds it."""
    env = lake_env(servers, "team")
    machines = [tmp_path_factory.mktemp(name) for name in ("machine-a", "machine-b")]
    for k, home in enumerate(machines, start=1):
        run_bench(home, *DRACO_RUN, "--shard", f"{k}/2")
    run_bench(machines[1], *EXTRACTION_RUN)
    created = run_bench(machines[0], "init", "--lake", env=env)  # once, before any load
    assert ": created, snapshot" in created.output, created.output
    _ingest_at_once(machines, env)
    root = machines[0]
    run_bench(root, "build", env=env)
    _, store = servers
    assert any(key.endswith(".parquet") for key in store.keys("bench-lake", "team/raw/"))
    single = tmp_path_factory.mktemp("single-machine")
    _local_build_of_the_lakes_events(single, env)
    return Team(single, root, env, machines)


def _ingest_at_once(homes: list[Path], env: dict[str, str]) -> None:
    """`bench ingest` on every machine at the same moment, each in a process of its own."""
    loads = [
        subprocess.Popen(
            [BENCH, "ingest"],
            env=bench_env(home, env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for home in homes
    ]
    outcomes = [(load.wait(timeout=300), load.stderr.read()) for load in loads]
    assert [code for code, _ in outcomes] == [0] * len(homes), [
        err[-2500:] for code, err in outcomes if code
    ]


def _local_build_of_the_lakes_events(home: Path, env: dict[str, str]) -> None:
    """The same events, built by the local default: the lake's raw tables copied into a new
    local warehouse, then dbt over it with no lake set."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        with open_warehouse(Path("unused"), read_only=True) as con:
            con.execute(f"attach '{home / 'warehouse.duckdb'}' as loc")
            con.execute("create schema loc.raw")
            for (table,) in con.execute(
                "select table_name from information_schema.tables "
                "where table_catalog = 'warehouse' and table_schema = 'raw'"
            ).fetchall():
                con.execute(f"create table loc.raw.{table} as from warehouse.raw.{table}")
            con.execute("detach loc")
    run_dbt(BenchPaths(home), ["build"])


@pytest.fixture
def on_the_lake(team, monkeypatch) -> dict[str, str]:
    """This process's environment pointed at the lake (for in-process reads and dbt calls)."""
    env = team.env
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def test_every_mart_equals_the_local_build_of_the_same_events(team, on_the_lake) -> None:
    single = team.single
    assert lake_target() is not None and lake_target().in_s3
    with open_warehouse(Path("unused"), read_only=True) as con:
        con.execute(f"attach '{single / 'warehouse.duckdb'}' as loc (read_only)")
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


def test_publish_serves_the_lake_and_rescore_rebuilds_on_it_beside_a_reader_and_a_loader(
    team, tmp_path
) -> None:
    single, root, env = team.single, team.root, team.env
    # publish copies the lake's marts into the data root's snapshot, which the app, `bench sql`
    # and `bench export` read as they read a local build's; it records the lake's snapshot
    run_bench(root, "publish", env=env)
    board = "select lane, round(score_mean, 9) from marts.draco_leaderboard order by all"
    served = run_bench(root, "sql", board, "--format", "csv", env=env).stdout
    with duckdb.connect(str(single / "warehouse.duckdb"), read_only=True) as con:
        built_here = con.execute(board).fetchall()
    assert served.splitlines()[1:] == [f"{lane},{score}" for lane, score in built_here]
    assert len(built_here) == 2
    with duckdb.connect(str(root / "serve.duckdb"), read_only=True) as con:
        (metadata,) = con.execute("select metadata from main._publish").fetchone()
    lake = json.loads(metadata)["lake"]
    assert lake["snapshot_id"] > 0
    assert lake["catalog"] == env["BENCH_WAREHOUSE"].replace(f":{CATALOG_PASSWORD}@", "@")
    with duckdb.connect(str(single / "warehouse.duckdb"), read_only=True) as con:
        (events,) = con.execute("select count(*) from raw.events").fetchone()
        (run_id,) = con.execute(
            "select run_id from marts.dim_runs where benchmark = 'rubric'"
        ).fetchone()
    status = run_bench(root, "status", env={**env, "COLUMNS": "400"}).stdout  # a row a line
    assert f"{events} events loaded, 0 quarantined (on the lake {lake['catalog']})" in status
    assert f"run {run_id}: 2 of 2 shards finished (finished)" in status
    # rescore rebuilds what the weights feed, on the lake, and republishes; meanwhile a reader
    # and another machine's load go on in other processes
    with _a_reader_and_a_loader_beside(env, tmp_path):
        run_bench(root, "rescore", "--weights", "completeness=1", env=env)
    composites = _leaderboard(env, "composite")
    assert len(composites) > 2
    assert composites == pytest.approx(_leaderboard(env, "completeness"))
    # a rebuild on the lake: this machine's log read again (nothing new: insert-only), every
    # model built from scratch, and every mart the same as the lake held before it, once a
    # build has caught up with the other machine's load during the rescore
    run_bench(root, "build", env=env)
    composites = _leaderboard(env, "composite")
    events_before = _count(env, "select count(*) from raw.events")
    rebuilt = run_bench(root, "rebuild", env={**env, "COLUMNS": "200"})
    marts = [line for line in rebuilt.stderr.splitlines() if line.startswith("│")]
    assert len(marts) > 30 and all(line.rstrip(" │").endswith("yes") for line in marts), (
        rebuilt.stderr
    )
    assert _count(env, "select count(*) from raw.events") == events_before
    assert composites == pytest.approx(_leaderboard(env, "composite"))  # the active weights
    assert not (root / "warehouse.duckdb").exists()  # nothing local is made instead


def test_a_reader_machine_pulls_the_published_snapshot_not_later_changes(team, tmp_path) -> None:
    root, env = team.root, team.env
    run_bench(root, "publish", env=env)
    board = "select run_id, system, composite from marts.extraction_leaderboard order by all"
    published = run_bench(root, "sql", board, "--format", "csv", env=env).stdout
    # a change on the lake nobody published (a build in progress, say)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        with open_warehouse(Path("unused")) as con:
            (changed,) = con.execute(
                "update marts.extraction_leaderboard set composite = -1"
            ).fetchone()
    assert changed > 2
    reader = tmp_path / "reader-machine"  # no log, no warehouse: only the lake's setting
    pulled = run_bench(reader, "pull", env=env)
    tables = re.search(r"pulled (\d+) tables of lake snapshot (\d+)", pulled.output)
    assert tables and int(tables.group(1)) > 30, pulled.output
    assert (reader / "serve.duckdb").exists()
    assert run_bench(reader, "sql", board, "--format", "csv", env=env).stdout == published
    assert "-1" not in published
    run_bench(root, "publish", env=env)  # now it is published, and the next pull has it
    run_bench(reader, "pull", env=env)
    again = run_bench(reader, "sql", board, "--format", "csv", env=env).stdout
    assert {line.rsplit(",", 1)[1] for line in again.splitlines()[1:]} == {"-1.0"}


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


@contextmanager
def _a_reader_and_a_loader_beside(env: dict[str, str], tmp_path: Path) -> Iterator[None]:
    """While the block runs (a build), another process polls the leaderboard and another
    machine loads 2,000 events: the reader never sees an error or a missing or half-written
    table, and the load keeps all its events, once each, beside the build's own."""
    expected = len(_leaderboard(env, "composite"))
    events_before = _count(env, "select count(*) from raw.events")
    other_machine = tmp_path / "machine-c"
    _log_of(other_machine, "machine-c", 2000)
    stop = tmp_path / "stop"
    reader = subprocess.Popen(
        [sys.executable, "-c", _POLL, str(stop)],
        env=bench_env(None, env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    loader = subprocess.Popen(
        [BENCH, "ingest"],
        env=bench_env(other_machine, env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield
    finally:
        stop.touch()
        out, err = reader.communicate(timeout=120)
        _, load_err = loader.communicate(timeout=300)
    polls = json.loads(out)
    assert polls["errors"] == [], polls["errors"][:3]
    assert len(polls["counts"]) > 5, err
    assert set(polls["counts"]) == {expected}  # never missing, never half written
    assert loader.returncode == 0, load_err[-3000:]
    assert _count(env, "select count(*) from raw.events") == events_before + 2000
    assert _count(env, "select count(distinct event_id) from raw.events") == events_before + 2000


def _count(env: dict[str, str], sql: str) -> int:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        with open_warehouse(Path("unused"), read_only=True) as con:
            return con.execute(sql).fetchone()[0]


def test_a_check_the_lake_cannot_enforce_still_fails_the_build(team, on_the_lake) -> None:
    root = team.root
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


def test_a_second_builder_is_refused_naming_the_first(team, on_the_lake) -> None:
    root, env = team.root, team.env
    holder = "bench pid 4242 on machine-b"
    weights = ("--weights", "completeness=0.6,success=0.4")  # a rescore: dbt always runs
    with builder_lock(lake_target(), holder):
        refused = run_bench(root, "rescore", *weights, env=env, check=False)
    assert refused.returncode == 2, refused.output
    said = " ".join(refused.output.split())
    assert f"is being built by {holder}: one builder at a time" in said, said
    with builder_lock(lake_target(), "the next builder"):  # it went with its holder's session
        pass


def test_no_credential_reaches_a_file_of_the_data_root(team) -> None:
    root = team.root
    found = [
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file()
        and any(secret.encode() in path.read_bytes() for secret in (CATALOG_PASSWORD, S3_SECRET))
    ]
    assert found == []
    assert os.environ.get("AWS_SECRET_ACCESS_KEY") != S3_SECRET  # only the commands had it


def _log_of(home: Path, machine: str, events: int) -> None:
    """A data root whose log holds `events` events of its own (ids no other machine has)."""
    with EventLog(home / "log").writer() as writer:
        writer.append(item_events(f"run-{machine}", 0, events, tool="lake-loaders"))


def test_a_run_split_across_two_machines_is_loaded_once_and_finished_by_both_shards(
    team, on_the_lake
) -> None:
    logs = [[event for _, event in EventLog(home / "log").read()] for home in team.machines]
    machine_ids = [{event["event_id"] for event in log} for log in logs]
    runs_collected = sorted({event["run_id"] for log in logs for event in log})
    # the shards' slices are disjoint, and each shard states the run's start, judge and finish
    # as its own events: no event id is in both logs
    assert not machine_ids[0] & machine_ids[1]
    for home in team.machines:  # loading again, one after the other: nothing new
        run_bench(home, "ingest", env=team.env)
    again = run_bench(team.machines[1], "init", "--lake", env=team.env)
    assert re.search(r": already there \(\d+ tables\), snapshot \d+", again.output), again.output
    with open_warehouse(Path("unused"), read_only=True) as con:
        loaded = [  # the tests above loaded other machines' runs as well
            id_
            for (id_,) in con.execute(
                "select event_id from raw.events where list_contains(?, run_id)", [runs_collected]
            ).fetchall()
        ]
        runs = con.execute(
            "select benchmark, status, n_shards, n_shards_finished, n_items_registered, "
            "n_completed from marts.dim_runs where list_contains(?, run_id) order by benchmark",
            [runs_collected],
        ).fetchall()
        shard_units = con.execute(
            "select shard, completed from staging.stg_events__run_finished "
            "where shard is not null order by shard"
        ).fetchall()
    assert len(loaded) == len(set(loaded))  # nothing doubled
    assert set(loaded) == machine_ids[0] | machine_ids[1]  # nothing lost
    # six demo tasks x two systems: three tasks each, and the run finished with its last shard
    assert shard_units == [(1, 6), (2, 6)]
    assert runs == [("extraction", "finished", None, 0, 5, 15), ("rubric", "finished", 2, 2, 6, 12)]


def test_two_machines_loading_first_into_a_lake_nobody_created_lose_nothing(
    servers, tmp_path
) -> None:
    env = lake_env(servers, "loaders")  # no `bench init --lake`: both loads create it
    homes = [tmp_path / machine for machine in ("machine-a", "machine-b")]
    for home in homes:
        _log_of(home, home.name, 1000)
    _ingest_at_once(homes, env)
    assert _count(env, "select count(*) from raw.events") == 2000
    assert _count(env, "select count(distinct event_id) from raw.events") == 2000


def test_each_publish_expires_the_snapshots_before_the_publish_it_follows(
    team, on_the_lake
) -> None:
    # By now the tests above have published several times (publish, rescores, the pull test).
    # A lake keeps every snapshot's files until they are expired: each publish drops what is
    # older than the publish before it, which a reader may still be pulling.
    with open_warehouse(Path("unused"), read_only=True) as con:
        published = [
            snapshot
            for (snapshot,) in con.execute(
                "select snapshot_id from bench_meta.published order by snapshot_id"
            ).fetchall()
        ]
        (oldest,) = con.execute("select min(snapshot_id) from warehouse.snapshots()").fetchone()
    assert len(published) >= 3
    assert oldest == published[-2]
    with open_warehouse(Path("unused"), snapshot=published[-2]) as con:  # still readable
        assert con.execute("select count(*) from marts.draco_leaderboard").fetchone()[0] > 0


def test_a_machine_that_collected_nothing_loads_every_log_from_the_bucket(
    team, servers, tmp_path
) -> None:
    """`bench log push` on each machine, then `bench ingest` with BENCH_LOG_BUCKET on a new data
    root, no lake: it holds every event the lake holds, each once, byte for byte (no two writers
    write one event id: each shard states the run's start and regime as its own events)."""
    _, store = servers
    store.bucket("bench-log")
    bucket = {
        "BENCH_LOG_BUCKET": "s3://bench-log/team",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": S3_SECRET,
        "AWS_ENDPOINT_URL": store.endpoint,
    }
    for machine in team.machines:
        pushed = run_bench(machine, "log", "push", env=bucket)
        assert "0 already there" in pushed.stdout
    writers = {key.split("/")[1] for key in store.keys("bench-log", "team/")}
    assert len(writers) == len(team.machines)  # a prefix per writer
    builder = tmp_path / "builder"
    loaded = run_bench(builder, "ingest", env=bucket)
    assert loaded.stderr.count(", intact (copied") == len(team.machines), loaded.output
    verified = run_bench(builder, "verify", env=bucket)
    assert f"union head of {len(team.machines)} writers' logs" in verified.stdout

    # the lake holds other machines' loads too (earlier tests): compare these machines' rows
    segments = sorted(
        segment.name for home in team.machines for segment in EventLog(home / "log").segments()
    )
    events = (
        "select event_id, event_type, payload from raw.events "
        "where list_contains(?, segment) order by event_id"
    )
    with duckdb.connect(str(builder / "warehouse.duckdb"), read_only=True) as con:
        from_bucket = con.execute(events, [segments]).fetchall()
        assert con.execute("select count(*) from raw.events").fetchone()[0] == len(from_bucket)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in team.env.items():
            patch.setenv(name, value)
        with open_warehouse(Path("unused"), read_only=True) as con:
            on_the_lake = con.execute(events, [segments]).fetchall()
    assert from_bucket == on_the_lake
