"""Rebuild and ingest hold the head the data root published (issue #25, item 6).

The forger: write access to the data root and the code. They rewrite every segment of the log
(new content hashes, chains and seals, as `_rechain`/`_reseal` do), delete `heads.jsonl`, and
run `bench rebuild`. On bcb0fc2 that verified (no head to check against), published the forged
rows, and the snapshot then recorded the forged head. Now the snapshot's head and the missing
`heads.jsonl` both fail verification for verify, ingest and rebuild, until someone restores the
log or records an acceptance with a reason.

The snapshot here is published from a hand-made mart (no dbt: seconds, not a build); the one
test that rebuilds for real is marked slow.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from bench.status import status_rows
from tests.bench_cli import BenchResult, run_bench
from tests.log_files import segment_bytes, write_segment
from tests.reliability.test_tamper import (
    MARK,
    _edit_event,
    _lines,
    _manifest,
    _rechain,
    _reseal,
    _write_lines,
    item_event,
    modify_line,
)
from transform import pipeline
from warehouse.log import EventLog
from warehouse.log_trust import (
    LogVerificationFailed,
    accept,
    last_trusted_head,
    load_verification,
    record_head,
    snapshot_head,
)
from warehouse.merkle import LogHead
from warehouse.paths import BenchPaths
from warehouse.publish import table_checksums
from warehouse.signing import generate_key
from warehouse.verify import verify_log


def bench(home: Path, *args: str, **env: str) -> BenchResult:
    return run_bench(home, *args, env={"COLUMNS": "200", **env}, check=False)


def rewrite_the_whole_log(log: EventLog) -> LogHead:
    """Every segment edited, every content hash, chain and seal redone: a log that verifies
    on its own."""
    for segment in log.segments():
        lines = _rechain(segment.name, [_edit_event(line) for line in _lines(segment)])
        _write_lines(segment, lines)
        _reseal(log, segment.name, lines)
    return log.head()


def _publish_hand_made_marts(paths: BenchPaths) -> None:
    """A snapshot with one mart holding every event's payload, published the way every
    command publishes (pipeline.publish), without a dbt build."""
    with duckdb.connect(str(paths.warehouse_db)) as con:
        con.execute("create schema if not exists marts")
        con.execute(
            "create or replace table marts.event_payloads as "
            "select event_id, payload::varchar as payload from raw.events"
        )
    pipeline.publish(paths)


@pytest.fixture(scope="module")
def published_home(tmp_path_factory) -> Path:
    """Two sealed runs, ingested and published: heads.jsonl and the snapshot hold the head."""
    home = tmp_path_factory.mktemp("published") / "home"
    paths = BenchPaths.from_env(home).ensure()
    log = pipeline.event_log(paths)
    for run in ("run-a", "run-b"):
        with log.writer() as writer:
            writer.append([item_event(i, run) for i in range(4)])
    assert pipeline.ingest(paths).verification.intact
    _publish_hand_made_marts(paths)
    assert snapshot_head(paths.serve_db).head == log.head() == last_trusted_head(paths)
    return home


@pytest.fixture
def paths(published_home, tmp_path) -> BenchPaths:
    home = tmp_path / "home"
    shutil.copytree(published_home, home)
    return BenchPaths.from_env(home)


def _snapshot_payloads(paths: BenchPaths) -> list[str]:
    with duckdb.connect(str(paths.serve_db), read_only=True) as con:
        return [p for (p,) in con.execute("select payload from marts.event_payloads").fetchall()]


def _raw_payloads(paths: BenchPaths) -> list[str]:
    with duckdb.connect(str(paths.warehouse_db), read_only=True) as con:
        return [p for (p,) in con.execute("select payload::varchar from raw.events").fetchall()]


def _assert_refused_with_a_way_forward(result: subprocess.CompletedProcess, *expected: str):
    assert result.returncode == 2, result.stdout + result.stderr
    for text in (*expected, 'bench verify --accept "REASON"', "restore the log"):
        assert text in result.stderr, (text, result.stderr)
    assert "Traceback" not in result.stderr


def test_the_forger_who_rewrites_the_log_and_deletes_heads_is_refused(paths):
    published = snapshot_head(paths.serve_db).head
    before = table_checksums(paths.serve_db)
    forged = rewrite_the_whole_log(pipeline.event_log(paths))
    paths.heads_file.unlink()
    assert verify_log(pipeline.event_log(paths), since=forged).intact  # consistent on its own

    rebuild = bench(paths.home, "rebuild")
    _assert_refused_with_a_way_forward(rebuild, "rebuild refused", "heads missing", "serve.duckdb")
    assert f"says {published.root}" in rebuild.stderr  # names the head it no longer extends
    ingest = bench(paths.home, "ingest")
    _assert_refused_with_a_way_forward(ingest, "heads missing", "does not extend head")
    verify = bench(paths.home, "verify")
    assert verify.returncode == 1 and "serve.duckdb: does not extend head" in verify.stderr

    assert table_checksums(paths.serve_db) == before  # nothing forged was published
    assert len(_snapshot_payloads(paths)) == 8
    assert not [p for p in _snapshot_payloads(paths) if MARK in p]
    assert not [p for p in _raw_payloads(paths) if MARK in p]
    assert snapshot_head(paths.serve_db).head == published
    assert last_trusted_head(paths) != forged  # the forged head was never vouched for
    assert not verify_log(pipeline.event_log(paths), since=published).intact  # --since published
    assert not list(paths.home.glob("*.rebuild*"))


def test_a_forged_heads_file_does_not_outvote_the_snapshot(paths):
    """heads.jsonl rewritten to the forged head instead of deleted: the snapshot still holds."""
    forged = rewrite_the_whole_log(pipeline.event_log(paths))
    paths.heads_file.unlink()
    record_head(paths, forged, "verified")
    with pytest.raises(LogVerificationFailed, match=r"serve\.duckdb: does not extend head"):
        pipeline.rebuild(paths)
    result = pipeline.ingest(paths)
    assert not result.verification.intact and result.loaded_events == 0


def test_a_publish_of_a_rewritten_log_keeps_the_held_head(paths):
    """`bench publish` after the rewrite (verification.json still says ok from before, or is
    deleted too) must not put the forged head into the snapshot or heads.jsonl."""
    published = snapshot_head(paths.serve_db).head
    forged = rewrite_the_whole_log(pipeline.event_log(paths))
    paths.heads_file.unlink()
    assert load_verification(paths)["status"] == "ok"
    assert bench(paths.home, "publish").returncode == 0
    assert snapshot_head(paths.serve_db).head == published
    paths.verification_file.unlink()
    _publish_hand_made_marts(paths)
    assert snapshot_head(paths.serve_db).head == published
    assert last_trusted_head(paths) is None
    assert forged != published
    with pytest.raises(LogVerificationFailed, match="does not extend head"):
        pipeline.rebuild(paths)


def test_missing_heads_beside_a_snapshot_is_a_failure_not_a_fresh_start(paths):
    """The log is untouched: only heads.jsonl is gone (emptied counts the same)."""
    paths.heads_file.unlink()
    ingest = bench(paths.home, "ingest")
    _assert_refused_with_a_way_forward(ingest, "heads.jsonl: heads missing")
    assert "does not extend" not in ingest.stderr  # the log itself still extends the head
    assert not paths.heads_file.exists()
    paths.heads_file.write_text("")
    with pytest.raises(LogVerificationFailed, match="heads missing"):
        pipeline.rebuild(paths)
    assert load_verification(paths)["status"] == "failed"

    accept(paths, "heads.jsonl deleted by the test")
    assert pipeline.ingest(paths).verification.intact


def test_accept_with_a_reason_lets_it_proceed_and_is_recorded(paths):
    published = snapshot_head(paths.serve_db).head
    forged = rewrite_the_whole_log(pipeline.event_log(paths))
    paths.heads_file.unlink()
    with pytest.raises(ValueError, match="needs a reason"):
        accept(paths, "  ")

    reason = "the rewrite is the test's own fixture, reviewed by the test"
    accepted = bench(paths.home, "verify", "--accept", reason)
    assert accepted.returncode == 0, accepted.stderr
    assert "acceptance recorded" in accepted.stdout
    assert "accepted serve.duckdb: does not extend head" in accepted.stderr

    record = _manifest(pipeline.event_log(paths))[-1]
    assert record["op"] == "accept" and record["reason"] == reason
    named = {(p["segment"], p["kind"]): p.get("head") for p in record["problems"]}
    assert named == {
        ("heads.jsonl", "heads missing"): None,
        ("serve.duckdb", "does not extend head"): str(published),
    }
    assert last_trusted_head(paths).size == forged.size + 1  # the acceptance is a leaf
    assert load_verification(paths)["status"] == "accepted"

    assert pipeline.ingest(paths).verification.intact
    assert "accepted on the record" in dict(status_rows(paths))["log verification"]
    _publish_hand_made_marts(paths)  # the next publish holds the new head: plain ok again
    assert snapshot_head(paths.serve_db).head == pipeline.event_log(paths).head()
    assert pipeline.ingest(paths).verification.intact
    assert load_verification(paths)["status"] == "ok"


def test_an_acceptance_covers_only_the_head_it_names(paths):
    """After an accepted rewrite and a new publish, a second rewrite fails again."""
    rewrite_the_whole_log(pipeline.event_log(paths))
    accept(paths, "first rewrite, reviewed")
    assert pipeline.ingest(paths).verification.intact
    _publish_hand_made_marts(paths)
    log = pipeline.event_log(paths)
    for segment in log.segments():  # a second, later rewrite
        lines = _rechain(
            segment.name, [json.loads(line) | {"run_id": "x"} for line in _lines(segment)]
        )
        _write_lines(segment, lines)
        _reseal(log, segment.name, lines)
    paths.heads_file.unlink()
    with pytest.raises(LogVerificationFailed, match=r"serve\.duckdb: does not extend head"):
        pipeline.rebuild(paths)


# --- the normal flows keep working ------------------------------------------------------------


def test_a_log_that_grows_is_loaded_and_its_new_head_published(paths):
    log = pipeline.event_log(paths)
    with log.writer() as writer:
        writer.append([item_event(i, "run-c") for i in range(3)])
    result = pipeline.ingest(paths)
    assert result.verification.intact and result.loaded_events == 3
    _publish_hand_made_marts(paths)
    assert snapshot_head(paths.serve_db).head == log.head() == last_trusted_head(paths)
    assert pipeline.ingest(paths).verification.intact


def test_a_fresh_data_root_and_one_without_a_snapshot_start_clean(tmp_path):
    paths = BenchPaths.from_env(tmp_path / "home").ensure()
    assert pipeline.ingest(paths).verification.intact  # no log, no snapshot
    with pipeline.event_log(paths).writer() as writer:
        writer.append([item_event(i, "run-a") for i in range(2)])
    paths.heads_file.unlink()  # no snapshot yet: nothing holds a head
    assert pipeline.ingest(paths).verification.intact


def test_a_snapshot_published_while_failing_does_not_hold_the_tampered_head(paths):
    """Tampered, ingested (fails), published anyway (what `bench run` does): the snapshot
    carries the held head forward, so restoring the log makes everything verify again."""
    published = snapshot_head(paths.serve_db).head
    segment = pipeline.event_log(paths).segments()[0]
    original = segment_bytes(segment)
    modify_line(pipeline.event_log(paths))
    assert not pipeline.ingest(paths).verification.intact
    _publish_hand_made_marts(paths)
    assert snapshot_head(paths.serve_db).head == published
    write_segment(segment, original)
    assert pipeline.ingest(paths).verification.intact


def test_signed_heads_still_verify_and_still_catch_the_forger(tmp_path, monkeypatch):
    private, public = tmp_path / "log.key", tmp_path / "log.key.pub"
    generate_key(private, public)
    monkeypatch.setenv("BENCH_LOG_SIGNING_KEY", str(private))
    monkeypatch.setenv("BENCH_LOG_PUBLIC_KEY", str(public))
    paths = BenchPaths.from_env(tmp_path / "home").ensure()
    with pipeline.event_log(paths).writer() as writer:
        writer.append([item_event(i, "run-a") for i in range(3)])
    assert pipeline.ingest(paths).verification.intact
    _publish_hand_made_marts(paths)
    with pipeline.event_log(paths).writer() as writer:
        writer.append([item_event(i, "run-b") for i in range(3)])
    assert pipeline.ingest(paths).verification.intact
    rewrite_the_whole_log(pipeline.event_log(paths))
    paths.heads_file.unlink()
    report = pipeline.ingest(paths).verification
    kinds = {(p.segment, p.kind) for p in report.problems}
    assert ("serve.duckdb", "does not extend head") in kinds
    assert ("MANIFEST.jsonl", "does not extend head") in kinds  # the last signed head


@pytest.mark.slow
def test_rebuild_with_dbt_refuses_the_forgery_then_publishes_it_once_accepted(tmp_path):
    """The issue's trial with a real build: the snapshot's dim_events keep the original rows
    until the rewrite is accepted with a reason."""
    paths = BenchPaths.from_env(tmp_path / "home").ensure()
    with pipeline.event_log(paths).writer() as writer:
        writer.append([item_event(i, "run-a") for i in range(4)])
    # The published snapshot before the forgery needs only dim_events from a real dbt build
    # (what `pipeline.refresh` does, its build selected): the full build is the rebuild's.
    assert pipeline.ingest(paths).verification.intact
    assert pipeline.build(paths, select=["+dim_events"])
    pipeline.publish(paths)

    def forged_rows() -> tuple[int, int]:
        with duckdb.connect(str(paths.serve_db), read_only=True) as con:
            return con.execute(
                "select count(*), count(*) filter (where payload::varchar like ?) "
                "from marts.dim_events where event_type = 'item_registered'",
                [f"%{MARK}%"],
            ).fetchone()

    assert forged_rows() == (4, 0)
    rewrite_the_whole_log(pipeline.event_log(paths))
    paths.heads_file.unlink()
    _assert_refused_with_a_way_forward(bench(paths.home, "rebuild"), "does not extend head")
    assert forged_rows() == (4, 0)

    assert bench(paths.home, "verify", "--accept", "rewrite reviewed").returncode == 0
    rebuilt = bench(paths.home, "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert forged_rows() == (4, 4)  # accepted on the record, so rebuilt from the new log
    assert bench(paths.home, "verify", "--since", "published").returncode == 0
