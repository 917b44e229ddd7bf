"""The log in object storage (warehouse/log_bucket.py), with a shared folder as the bucket: two
collecting machines push, a builder that collected nothing loads both, and the bucket's copy is
held to the same integrity checks as a local log (a changed, a missing and a rewritten segment).
The S3 form of the same is in tests/lake/test_lake_team.py."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest
import zstandard

from tests.bench_cli import run_bench
from warehouse.log import EventLog
from warehouse.log_bucket import writer_id
from warehouse.paths import BenchPaths

DRACO_RUN = (
    *("run", "draco", "--tasks", "demo", "--systems", "local-rag,closed-book-research"),
    *("--judge", "offline", "--samples", "1", "--no-preflight", "--no-score"),
)
EXTRACTION_RUN = (
    *("run", "extraction", "--corpus", "demo", "--limit", "3", "--no-score"),
    *("--engines", "trafilatura,html-text"),
)


def _log_ids(home: Path) -> list[str]:
    """Every event id in a data root's log, read from its segments (plain or compressed)."""
    return [json.loads(line)["event_id"] for line in _log_lines(home)]


def _lines_read(ingest_stdout: str) -> int:
    """The `lines read` column of `bench ingest`'s table."""
    (row,) = [line for line in ingest_stdout.splitlines() if re.match(r"^│\s*\d", line)]
    return int(row.split("│")[2])


def _loaded_ids(home: Path) -> list[str]:
    with duckdb.connect(str(BenchPaths(home).warehouse_db), read_only=True) as con:
        return [row[0] for row in con.execute("select event_id from raw.events").fetchall()]


@pytest.fixture
def team(tmp_path: Path) -> dict[str, Path]:
    """Machines a and b ran the two shards of one DRACO run and pushed; the bucket is a folder."""
    bucket = tmp_path / "bucket"
    homes = {name: tmp_path / name for name in ("a", "b", "builder")}
    for k, name in enumerate(("a", "b"), start=1):
        run_bench(homes[name], *DRACO_RUN, "--shard", f"{k}/2")
        pushed = run_bench(homes[name], "log", "push", env={"BENCH_LOG_BUCKET": str(bucket)})
        assert "uploaded 1 sealed segment(s), 0 already there" in pushed.stdout
    return {**homes, "bucket": bucket}


def _env(team) -> dict[str, str]:
    return {"BENCH_LOG_BUCKET": str(team["bucket"])}


def test_a_builder_loads_every_writers_log_once_and_then_only_what_is_new(team) -> None:
    writers = sorted(writer_id(BenchPaths(team[name])) for name in ("a", "b"))
    assert sorted(p.name for p in team["bucket"].iterdir()) == writers  # a prefix per writer
    again = run_bench(team["a"], "log", "push", env=_env(team))
    assert "uploaded 0 sealed segment(s), 1 already there" in again.stdout  # uploaded once

    run_bench(team["builder"], "ingest", env=_env(team))
    # no event id is written by two writers: each shard states the run's start, judge regime
    # and finish as events of its own (warehouse/events.ShardFact), and each is loaded once
    expected = _log_ids(team["a"]) + _log_ids(team["b"])
    assert len(expected) > 100 and len(set(expected)) == len(expected)
    assert sorted(_loaded_ids(team["builder"])) == sorted(expected)

    # a second run on machine a, pushed: the next load reads only its lines
    before = _log_ids(team["a"]) + _log_ids(team["b"])
    run_bench(team["a"], *EXTRACTION_RUN)
    run_bench(team["a"], "log", "push", env=_env(team))
    new = len(_log_ids(team["a"])) + len(_log_ids(team["b"])) - len(before)
    loaded = run_bench(team["builder"], "ingest", env=_env(team))
    assert _lines_read(loaded.stderr) == new > 0
    assert sorted(_loaded_ids(team["builder"])) == sorted(
        set(_log_ids(team["a"])) | set(_log_ids(team["b"]))
    )
    verified = run_bench(team["builder"], "verify", env=_env(team))
    assert verified.stdout.count(": intact,") == 2, verified.output
    assert "union head of 2 writers' logs" in verified.stdout

    # the builder's build sees one DRACO run, finished by both shards
    run_bench(team["builder"], "build")
    with duckdb.connect(str(BenchPaths(team["builder"]).warehouse_db), read_only=True) as con:
        runs = con.execute(
            "select n_shards, n_shards_finished, status from marts.dim_runs "
            "where benchmark = 'rubric'"
        ).fetchall()
    assert runs == [(2, 2, "finished")]
    # a rebuild reads both copies again, both shards' starts in one load: every mart as the
    # incremental build made it
    rebuilt = run_bench(team["builder"], "rebuild", env={**_env(team), "COLUMNS": "200"})
    marts = [line for line in rebuilt.stderr.splitlines() if line.startswith("│")]
    differ = {line.split()[1] for line in marts if not line.rstrip(" │").endswith("yes")}
    assert len(marts) > 30 and differ == set(), rebuilt.stderr
    assert sorted(_loaded_ids(team["builder"])) == sorted(
        set(_log_ids(team["a"])) | set(_log_ids(team["b"]))
    )


def _marts(home: Path) -> dict[str, list[tuple]]:
    """What the marts say of the run's start and regime."""
    with duckdb.connect(str(BenchPaths(home).warehouse_db), read_only=True) as con:
        runs = "select run_started_event_id, started_at, argv from marts.dim_runs"
        regimes = "select distinct regime_event_id from marts.fct_draco_verdict_samples"
        return {
            "dim_runs": con.execute(runs).fetchall(),
            "regimes": con.execute(regimes).fetchall(),
        }


def test_a_shard_that_started_first_but_arrives_last_tells_the_run(tmp_path: Path) -> None:
    """Shard 1 starts first, shard 2 second; the builder loads and builds shard 2's log alone,
    then shard 1's. The run is then told by shard 1's start and judge regime, in every mart row
    the first build wrote as well (the verdict samples are incremental), exactly as a rebuild
    from both logs at once tells it."""
    bucket = tmp_path / "bucket"
    homes = {name: tmp_path / name for name in ("a", "b", "builder")}
    env = {"BENCH_LOG_BUCKET": str(bucket)}
    for k, name in enumerate(("a", "b"), start=1):
        run_bench(homes[name], *DRACO_RUN, "--shard", f"{k}/2")
    starts = {}
    for name in ("a", "b"):
        (started,) = [
            event
            for event in map(json.loads, _log_lines(homes[name]))
            if event["event_type"] == "run_started"
        ]
        starts[name] = started
    assert starts["a"]["occurred_at"] < starts["b"]["occurred_at"]
    assert starts["a"]["event_id"] != starts["b"]["event_id"]  # a fact of each shard's own

    run_bench(homes["b"], "log", "push", env=env)
    run_bench(homes["builder"], "ingest", env=env)
    run_bench(homes["builder"], "build")
    assert _marts(homes["builder"])["dim_runs"][0][0] == starts["b"]["event_id"]

    run_bench(homes["a"], "log", "push", env=env)
    run_bench(homes["builder"], "ingest", env=env)
    run_bench(homes["builder"], "build")
    incremental = _marts(homes["builder"])
    (run,) = incremental["dim_runs"]
    assert run[0] == starts["a"]["event_id"]
    assert json.loads(run[2]) == starts["a"]["payload"]["argv"]
    assert len(incremental["regimes"]) == 1  # every sample told by one regime: shard 1's

    rebuilt = run_bench(homes["builder"], "rebuild", env={**env, "COLUMNS": "200"})
    marts = [line for line in rebuilt.stderr.splitlines() if line.startswith("│")]
    differ = {line.split()[1] for line in marts if not line.rstrip(" │").endswith("yes")}
    assert len(marts) > 30 and differ == set(), rebuilt.stderr
    assert _marts(homes["builder"]) == incremental


def _log_lines(home: Path) -> list[str]:
    log = EventLog(BenchPaths(home).log_dir)
    lines = []
    for segment in log.segments():
        with log.open_segment(segment) as handle:
            lines += handle.read().splitlines()
    return lines


def _bucket_segment(team, machine: str) -> Path:
    folder = team["bucket"] / writer_id(BenchPaths(team[machine]))
    (segment,) = folder.glob("*.jsonl.zst")
    return segment


def test_a_segment_changed_in_the_bucket_is_set_aside_and_the_other_writer_still_loads(
    team,
) -> None:
    run_bench(team["builder"], "ingest", env=_env(team))
    segment = _bucket_segment(team, "a")
    data = zstandard.ZstdDecompressor().stream_reader(segment.read_bytes()).read()
    forged = data.replace(b'"local-rag"', b'"local-RAG"', 1)
    assert forged != data
    segment.write_bytes(zstandard.ZstdCompressor().compress(forged))

    refused = run_bench(team["builder"], "ingest", env=_env(team), check=False)
    assert refused.returncode != 0
    assert writer_id(BenchPaths(team["a"])) in refused.stderr
    assert segment.name.removesuffix(".zst") in refused.stderr
    # what machine a's segment loaded is taken out; machine b's stays
    assert sorted(_loaded_ids(team["builder"])) == sorted(set(_log_ids(team["b"])))
    assert run_bench(team["builder"], "verify", env=_env(team), check=False).returncode == 1


def test_events_two_writers_hold_stay_when_the_copies_they_were_loaded_from_are_set_aside(
    team,
) -> None:
    """One whole run executed on two machines (no --shard): the same facts under the same ids.
    The builder loads machine a's copies and skips b's as already loaded. When a's segment is
    then set aside, the facts stay: b's copies are read again."""
    run_bench(team["a"], *EXTRACTION_RUN)
    run_bench(team["a"], "log", "push", env=_env(team))
    run_bench(team["builder"], "ingest", env=_env(team))
    run_bench(team["b"], *EXTRACTION_RUN)
    run_bench(team["b"], "log", "push", env=_env(team))
    run_bench(team["builder"], "ingest", env=_env(team))
    events = [json.loads(line) for line in _log_lines(team["b"])]
    draco_run = events[0]["run_id"]  # the shard b ran first
    extraction = {event["event_id"] for event in events if event["run_id"] != draco_run}
    assert len(extraction) > 10 and extraction <= set(_log_ids(team["a"]))  # the same ids
    loaded = _loaded_ids(team["builder"])
    assert len(loaded) == len(set(loaded))  # each once

    folder = team["bucket"] / writer_id(BenchPaths(team["a"]))
    newest = max(folder.glob("*.jsonl.zst"))  # machine a's extraction run
    data = zstandard.ZstdDecompressor().stream_reader(newest.read_bytes()).read()
    newest.write_bytes(zstandard.ZstdCompressor().compress(data.replace(b"trafilatura", b"T", 1)))
    refused = run_bench(team["builder"], "ingest", env=_env(team), check=False)
    assert refused.returncode != 0 and newest.name.removesuffix(".zst") in refused.stderr
    assert extraction <= set(_loaded_ids(team["builder"]))


def _kept_copies(home: Path) -> dict[str, str]:
    with duckdb.connect(str(BenchPaths(home).warehouse_db), read_only=True) as con:
        return dict(con.execute("select event_id, content_sha256 from raw.events").fetchall())


def test_one_fact_stated_on_two_machines_keeps_the_same_copy_in_any_load_order(
    tmp_path: Path,
) -> None:
    """One whole run executed on two machines (no --shard): the same ids, other bytes (clock,
    command line). The builder loads a's log and builds, then b's and builds: it keeps, for
    every id, the copy with the smallest content_sha256, and its incremental marts equal its
    rebuild's, which reads both logs in one load (ingest/copies.py; every order of loads, and a
    load killed before its copies were compared, in tests/ingest/test_kept_copy.py)."""
    homes = {name: tmp_path / name for name in ("a", "b", "x")}
    buckets = {"x": tmp_path / "bucket"}
    for machine in ("a", "b"):
        run_bench(homes[machine], *EXTRACTION_RUN)
    copies = {machine: {} for machine in ("a", "b")}
    for machine in ("a", "b"):
        for event in map(json.loads, _log_lines(homes[machine])):
            copies[machine][event["event_id"]] = event["content_sha256"]
    assert copies["a"].keys() == copies["b"].keys()  # the same facts under the same ids
    differ = {i for i in copies["a"] if copies["a"][i] != copies["b"][i]}
    b_wins = {i for i in differ if copies["b"][i] < copies["a"][i]}
    assert b_wins and differ - b_wins  # each machine's copy wins for some ids
    rule = {i: min(copies["a"][i], copies["b"][i]) for i in copies["a"]}

    def push(machine: str, builder: str) -> None:
        run_bench(homes[machine], "log", "push", env={"BENCH_LOG_BUCKET": str(buckets[builder])})

    def load(builder: str):
        return run_bench(homes[builder], "ingest", env={"BENCH_LOG_BUCKET": str(buckets[builder])})

    push("a", "x")
    load("x")
    run_bench(homes["x"], "build")
    push("b", "x")
    second = load("x")
    assert f"{len(b_wins)} event(s) arrived again from another writer" in second.stderr
    assert _kept_copies(homes["x"]) == rule
    status = run_bench(homes["x"], "status", env={"COLUMNS": "400"}).stdout
    assert f"; {len(b_wins)} loaded copies replaced by another writer's" in status
    run_bench(homes["x"], "build")

    rebuilt = run_bench(
        homes["x"], "rebuild", env={"BENCH_LOG_BUCKET": str(buckets["x"]), "COLUMNS": "200"}
    )
    marts = [line for line in rebuilt.stderr.splitlines() if line.startswith("│")]
    unequal = {line.split()[1] for line in marts if not line.rstrip(" │").endswith("yes")}
    assert len(marts) > 30 and unequal == set(), rebuilt.stderr
    assert _kept_copies(homes["x"]) == rule


def test_a_segment_missing_from_the_bucket_is_reported(team) -> None:
    run_bench(team["builder"], "ingest", env=_env(team))
    _bucket_segment(team, "b").unlink()
    refused = run_bench(team["builder"], "ingest", env=_env(team), check=False)
    assert refused.returncode != 0
    assert "missing segment" in refused.stderr
    assert sorted(_loaded_ids(team["builder"])) == sorted(set(_log_ids(team["a"])))


def test_a_writers_history_rewritten_in_the_bucket_does_not_extend_the_held_head(
    team, tmp_path: Path
) -> None:
    """A forger with write access to the bucket replaces machine a's whole log (MANIFEST and
    segment, each consistent with the other): the builder held a's head after the first load."""
    run_bench(team["builder"], "ingest", env=_env(team))
    loaded = sorted(_loaded_ids(team["builder"]))
    forger = tmp_path / "forger"
    run_bench(forger, *DRACO_RUN, "--shard", "1/2")
    prefix = team["bucket"] / writer_id(BenchPaths(team["a"]))
    shutil.rmtree(prefix)
    staged = tmp_path / "staged"
    run_bench(forger, "log", "push", env={"BENCH_LOG_BUCKET": str(staged)})
    shutil.copytree(staged / writer_id(BenchPaths(forger)), prefix)

    refused = run_bench(team["builder"], "ingest", env=_env(team), check=False)
    assert refused.returncode != 0
    assert "does not extend head" in refused.stderr
    assert sorted(_loaded_ids(team["builder"])) == loaded  # nothing of the forged log loaded


def test_a_bucket_that_cannot_be_written_is_one_clear_error(tmp_path: Path) -> None:
    home = tmp_path / "a"
    run_bench(home, *EXTRACTION_RUN)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the bucket should be")
    failed = run_bench(home, "log", "push", env={"BENCH_LOG_BUCKET": str(blocked)}, check=False)
    assert failed.returncode == 2
    assert "BENCH_LOG_BUCKET=" in failed.stderr and "uploading" in failed.stderr
    assert "Traceback" not in failed.stderr
    unset = run_bench(home, "log", "push", env={"BENCH_LOG_BUCKET": ""}, check=False)
    assert unset.returncode == 2 and "set BENCH_LOG_BUCKET" in unset.stderr


def test_a_run_with_a_bucket_set_pushes_its_log_by_itself(tmp_path: Path) -> None:
    """BENCH_LOG_BUCKET set: a run and a correction each end with their log in the bucket, with
    no `bench log push`. A bucket that cannot be written fails the command (exit 1), its events
    safe in the local log."""
    home, bucket = tmp_path / "a", tmp_path / "bucket"
    env = {"BENCH_LOG_BUCKET": str(bucket)}
    ran = run_bench(home, *EXTRACTION_RUN, env=env)
    assert "log pushed to $BENCH_LOG_BUCKET" in ran.stderr
    prefix = bucket / writer_id(BenchPaths(home))
    stored = sorted(p.name.removesuffix(".zst") for p in prefix.glob("*.jsonl.zst"))
    assert stored == sorted(EventLog(BenchPaths(home).log_dir).manifest()) and len(stored) == 1

    item = json.loads(_log_lines(home)[1])["payload"]["item_id"]
    exclude = ("exclude", item, "--benchmark", "extraction", "--reason", "a broken page")
    run_bench(home, *exclude, "--no-score", env=env)
    assert len(list(prefix.glob("*.jsonl.zst"))) == 2  # the correction's segment too

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the bucket should be")
    another_run = ("run", "extraction", "--corpus", "demo", "--limit", "4", "--no-score")
    failed = run_bench(home, *another_run, env={"BENCH_LOG_BUCKET": str(blocked)}, check=False)
    assert failed.returncode == 1, failed.output
    assert "log push failed" in failed.stderr and "bench log push" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert len(EventLog(BenchPaths(home).log_dir).manifest()) == 3  # the run is in the log


def test_with_a_public_key_the_builder_loads_only_what_a_writers_signed_heads_cover(
    tmp_path: Path,
) -> None:
    """Writer a signs its heads (BENCH_LOG_SIGNING_KEY), writer b does not; the builder holds
    the public key. a's log loads and b's is refused as unsigned. A push caught between a's
    signed heads and its MANIFEST still verifies; records added to the bucket without the key
    are refused, and nothing of them loads."""
    from warehouse.signing import generate_key

    private, public = tmp_path / "keys" / "log.key", tmp_path / "keys" / "log.pub"
    generate_key(private, public)
    bucket, homes = tmp_path / "bucket", {n: tmp_path / n for n in ("a", "b", "builder")}
    env = {"BENCH_LOG_BUCKET": str(bucket)}
    signing = {**env, "BENCH_LOG_SIGNING_KEY": str(private)}
    builder_env = {**env, "BENCH_LOG_PUBLIC_KEY": str(public)}
    run_bench(homes["a"], *EXTRACTION_RUN, env=signing)
    run_bench(homes["b"], *EXTRACTION_RUN[:-2], "--engines", "html-text", env=env)
    # a local record a made without the key (its ingest's `compress`): not pushed until signed
    run_bench(homes["a"], "ingest")
    unsigned_locally = len(EventLog(BenchPaths(homes["a"]).log_dir).manifest_records())
    pushed = run_bench(homes["a"], "log", "push", env=signing)
    said = " ".join(pushed.stdout.split())
    assert f"MANIFEST of {unsigned_locally - 1} records" in said, said

    refused = run_bench(homes["builder"], "ingest", env=builder_env, check=False)
    b = writer_id(BenchPaths(homes["b"]))
    assert refused.returncode != 0 and b in refused.stderr and "unsigned" in refused.stderr
    assert sorted(_loaded_ids(homes["builder"])) == sorted(_log_ids(homes["a"]))

    # b stops collecting; a runs again. Its push is caught after the signed heads, before the
    # MANIFEST: the builder's copy is a head behind, and verifies
    shutil.rmtree(bucket / b)
    a = bucket / writer_id(BenchPaths(homes["a"]))
    before = (a / "MANIFEST.jsonl").read_bytes()
    first_run = _log_ids(homes["a"])
    run_bench(homes["a"], *EXTRACTION_RUN[:-2], "--engines", "html-text", env=signing)
    (a / "MANIFEST.jsonl").write_bytes(before)
    loaded = run_bench(homes["builder"], "ingest", env=builder_env)
    assert ", intact (copied" in loaded.stderr, loaded.output
    assert sorted(_loaded_ids(homes["builder"])) == sorted(first_run)  # the new segment waits
    run_bench(homes["a"], "log", "push", env=signing)
    run_bench(homes["builder"], "ingest", env=builder_env)
    assert sorted(_loaded_ids(homes["builder"])) == sorted(_log_ids(homes["a"]))

    # a forger with write access to the bucket but not the key adds a sealed segment
    forged_home = tmp_path / "forger"
    run_bench(forged_home, *EXTRACTION_RUN[:-2], "--engines", "trafilatura", env={})
    forged_log = EventLog(BenchPaths(forged_home).log_dir)
    (segment,) = forged_log.manifest()
    (a / f"{segment}.zst").write_bytes(
        zstandard.ZstdCompressor().compress((forged_log.log_dir / segment).read_bytes())
    )
    records = (a / "MANIFEST.jsonl").read_bytes() + forged_log.manifest_path.read_bytes()
    (a / "MANIFEST.jsonl").write_bytes(records)
    forged = run_bench(homes["builder"], "ingest", env=builder_env, check=False)
    assert forged.returncode != 0 and "unsigned records" in forged.stderr, forged.output
    assert sorted(_loaded_ids(homes["builder"])) == sorted(_log_ids(homes["a"]))


def test_a_failed_push_still_refreshes_then_fails_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """after_writing: the push comes first, the --score refresh runs whether it worked or not,
    and only then does a failed push fail the command."""
    import typer
    from rich.console import Console

    from bench.log_cli import after_writing

    home = tmp_path / "a"
    run_bench(home, *EXTRACTION_RUN)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the bucket should be")
    monkeypatch.setenv("BENCH_LOG_BUCKET", str(blocked))
    said, refreshed = Console(record=True, width=200), []
    with pytest.raises(typer.Exit) as failed:
        after_writing(BenchPaths(home), said, lambda: refreshed.append(said.export_text()))
    assert failed.value.exit_code == 1
    assert len(refreshed) == 1 and "log push failed" in refreshed[0]  # pushed, then refreshed
    monkeypatch.setenv("BENCH_LOG_BUCKET", str(tmp_path / "bucket"))
    after_writing(BenchPaths(home), said, None)  # no --score: the push alone
    assert "uploaded 1 sealed segment(s)" in " ".join(said.export_text().split())
