"""The sequence test's checks catch what they are for: each is shown a real log or a DuckDB
file holding the breakage (a re-appended staging row, an event loaded twice or not at all, a
unit ended twice, a finished run missing a unit, a snapshot no build produced), and one that
holds it not (a row per chunk is not a re-append). Fast: no dbt, no bench process."""

from __future__ import annotations

from collections import Counter

import duckdb

from tests.sequences import invariants
from tests.sequences.invariants import LogView
from tests.sequences.model import ROTATION, World, pick_rule
from warehouse.events import (
    DatasetRef,
    ExtractionCompleted,
    ExtractionFailed,
    ItemRegistered,
    RunFinished,
    RunStarted,
    SystemRef,
    make_event,
)
from warehouse.log import EventLog
from warehouse.provenance import producer_for

PRODUCER = producer_for({"test": "sequence-invariants"})
RUN = "run-seq"


def _extraction_run(items: int, *, finished: bool) -> list:
    events = [
        make_event(
            RunStarted(
                benchmark="extraction",
                spec={"item_ids": [f"item-{i}" for i in range(items)]},
                spec_sha256="0" * 64,
                dataset=DatasetRef(name="demo", uri="demo", sha256="0" * 64, item_count=items),
                systems=[SystemRef(name="html2text", version="1")],
            ),
            run_id=RUN,
            producer=PRODUCER,
        )
    ]
    events += [
        make_event(
            ItemRegistered(
                item_id=f"item-{i}",
                dataset_sha256="0" * 64,
                position=i,
                ground_truth_text="t",
                anchors=["t"],
                anchor_rule_version="1",
            ),
            run_id=RUN,
            producer=PRODUCER,
        )
        for i in range(items)
    ]
    if finished:
        events.append(
            make_event(
                RunFinished(terminal_events=items, completed=items, failed=0, duration_s=1.0),
                run_id=RUN,
                producer=PRODUCER,
            )
        )
    return events


def _completed(item: str, attempt: int = 1):
    return make_event(
        ExtractionCompleted(
            item_id=item,
            system="html2text",
            system_version="1",
            attempt=attempt,
            source="engine",
            render_path=None,
            input_sha256=None,
            output_text="t",
            output_bytes=1,
        ),
        run_id=RUN,
        producer=PRODUCER,
    )


def _failed(item: str, attempt: int = 1):
    return make_event(
        ExtractionFailed(
            item_id=item,
            system="html2text",
            system_version="1",
            attempt=attempt,
            error_class="Timeout",
            error_message="slow",
        ),
        run_id=RUN,
        producer=PRODUCER,
    )


def _log(tmp_path, events) -> LogView:
    log = EventLog(tmp_path / "log")
    with log.writer() as writer:
        writer.append(events)
    return LogView.read(tmp_path / "log")


def test_one_terminal_event_per_unit_attempt(tmp_path):
    events = [*_extraction_run(2, finished=True), _completed("item-0"), _failed("item-1")]
    events += [_failed("item-0", attempt=2), _completed("item-0", attempt=3)]  # retries: fine
    assert invariants.terminal_units(_log(tmp_path / "ok", events)) == []

    twice = [*events, _failed("item-1")]  # the same fact again: one line, one event
    assert invariants.terminal_units(_log(tmp_path / "same", twice)) == []
    ended_twice = [*events, _completed("item-1")]  # attempt 1 of item-1 failed and completed
    problems = invariants.terminal_units(_log(tmp_path / "twice", ended_twice))
    assert len(problems) == 1
    assert "2 terminal events (extraction_failed, extraction_completed)" in problems[0]


def test_a_finished_run_has_a_terminal_event_for_every_unit(tmp_path):
    events = [*_extraction_run(3, finished=True), _completed("item-0"), _failed("item-2")]
    problems = invariants.terminal_units(_log(tmp_path / "finished", events))
    assert problems == [
        "run run-seq (extraction, engine) is finished but 1 of 3 units have no terminal event, "
        "e.g. item item-1 html2text"
    ]
    unfinished = [*_extraction_run(3, finished=False), _completed("item-0")]
    assert invariants.terminal_units(_log(tmp_path / "unfinished", unfinished)) == []


def test_every_log_event_in_raw_events_exactly_once(tmp_path):
    log = _log(tmp_path, _extraction_run(3, finished=True))
    ids = list(log.ids())
    loaded = Counter(ids)
    assert invariants.raw_events_once(log, loaded, all_loaded=True) == []
    assert invariants.raw_events_once(log, None, all_loaded=False) == []  # nothing ingested yet

    short = Counter(ids[:-1])
    assert invariants.raw_events_once(log, short, all_loaded=False) == []  # not yet: fine
    [missing] = invariants.raw_events_once(log, short, all_loaded=True)
    assert missing.startswith("1 of 5 log events not in raw.events after a finished ingest")

    doubled = Counter(ids) + Counter(ids[:2])
    [twice] = invariants.raw_events_once(log, doubled, all_loaded=True)
    assert twice.startswith("2 event id(s) in raw.events more than once (2 extra rows)")
    [foreign] = invariants.raw_events_once(log, loaded + Counter(["not-in-log"]), all_loaded=False)
    assert foreign == "1 event id(s) in raw.events are not in the log"


def test_staging_models_unique_on_their_declared_event_key(tmp_path):
    db = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create schema staging")
        # a row per chunk: one event id on several rows is its grain, not a re-append
        con.execute(
            "create table staging.stg_events__chunks_normalized as "
            "select 'c1' as chunks_event_id, r as chunk_rank, 'x' as source_event_id "
            "from range(3) t(r)"
        )
        con.execute(
            "create table staging.stg_events__imported_verdict as "
            "select 'v' || (i % 2) as imported_verdict_event_id from range(4) t(i)"
        )
    assert invariants.staging_event_keys()["stg_events__judge_verdict"] == ("verdict_event_id",)
    assert invariants.staging_duplicates(db) == [
        "staging.stg_events__imported_verdict: 4 rows for 2 distinct (imported_verdict_event_id) "
        "(2 re-appended)"
    ]


def test_the_snapshot_is_the_last_successful_build():
    first, second = {"fct_a": (1, "1")}, {"fct_a": (2, "2")}
    # a publish of the last build: exactly it
    assert invariants.snapshot_problems_of(second, [first, second], True) == []
    [stale] = invariants.snapshot_problems_of(first, [first, second], True)
    assert stale == "snapshot differs from the last successful build: fct_a (2 rows -> 1 rows)"
    # before the next publish, any earlier successful build; never one no build produced
    assert invariants.snapshot_problems_of(first, [first, second], False) == []
    [torn] = invariants.snapshot_problems_of({"fct_a": (3, "3")}, [first, second], False)
    assert torn.startswith("the snapshot is no successful build's marts")
    assert invariants.snapshot_problems_of(first, [], False) == [
        "a snapshot exists but no build has succeeded"
    ]


class _Lowest:
    """A chooser that always answers its lowest choice: hypothesis' first draw."""

    def integer(self, low, high):
        return low

    def choice(self, options):
        return options[0]


class _Anything(World):
    def __init__(self):
        self.rotation = ROTATION

    def available(self, rule):
        return True


def test_the_lowest_choices_tour_every_rule():
    world = _Anything()
    tour = [pick_rule(world, _Lowest(), index) for index in range(len(World.RULES))]
    assert tour == list(World.RULES)
    assert Counter(ROTATION) == Counter(World.RULES)  # as often as its weight


def test_an_export_missing_a_row_or_changing_a_value_is_caught_and_a_faithful_one_is_not(tmp_path):
    serve = tmp_path / "serve.duckdb"
    with duckdb.connect(str(serve)) as con:
        con.execute("create schema marts")
        con.execute(
            "create table marts.board as select range as id, range / 3 as score from range(5)"
        )
        for name, query in {
            "same": "select * from marts.board",
            "short": "select * from marts.board where id < 4",
            "changed": "select id, case when id = 2 then 9.0 else score end as score from marts.board",
        }.items():
            con.execute(f"copy ({query}) to '{tmp_path / name}.parquet' (format parquet)")
        con.execute(f"copy marts.board to '{tmp_path / 'same.csv'}' (header)")
    assert invariants.export_problems(serve, "board", tmp_path / "same.parquet", "parquet") == []
    assert invariants.export_problems(serve, "board", tmp_path / "same.csv", "csv") == []
    short = invariants.export_problems(serve, "board", tmp_path / "short.parquet", "parquet")
    assert short == ["board: exported 4 rows, the snapshot holds 5"]
    changed = invariants.export_problems(serve, "board", tmp_path / "changed.parquet", "parquet")
    assert changed == ["board: 2 row(s) differ between export and snapshot"]
    missing = invariants.export_problems(serve, "board", tmp_path / "none.parquet", "parquet")
    assert missing == ["bench export board exited 0 but wrote no none.parquet"]


def test_an_empty_mart_exports_as_an_empty_json_lines_file(tmp_path):
    serve = tmp_path / "serve.duckdb"
    with duckdb.connect(str(serve)) as con:
        con.execute("create schema marts")
        con.execute("create table marts.board as select range as id from range(0)")
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "stray.json").write_text('{"id": 1}\n')
    assert invariants.export_problems(serve, "board", tmp_path / "empty.json", "json") == []
    stray = invariants.export_problems(serve, "board", tmp_path / "stray.json", "json")
    assert stray == ["board: the snapshot is empty, the export is not"]


def test_a_sql_count_other_than_the_snapshots_is_caught(tmp_path):
    serve = tmp_path / "serve.duckdb"
    with duckdb.connect(str(serve)) as con:
        con.execute("create schema marts")
        con.execute("create table marts.board as select range as id from range(5)")
    assert invariants.sql_problems(serve, "board", '{"n":5}\n1 row(s)') == []
    assert invariants.sql_problems(serve, "board", '{"n":4}') == [
        "bench sql counted [4] rows of board, not [5]"
    ]
    assert invariants.sql_problems(serve, "board", "error: query failed") == [
        "bench sql counted [] rows of board, not [5]"
    ]


def test_status_that_miscounts_events_or_leaves_out_the_snapshot_parts_is_caught(tmp_path):
    home = tmp_path / "home"
    (home / "log").mkdir(parents=True)
    (home / "log" / "seg.jsonl").write_bytes(b"x" * 1_200_000)
    (home / "serve.parts").mkdir()
    (home / "serve.parts" / "marts.t.parquet").write_bytes(b"p" * 2_000_000)
    (home / "serve.duckdb").write_bytes(b"s" * 300_000)
    with duckdb.connect(str(home / "warehouse.duckdb")) as con:
        con.execute("create schema raw")
        con.execute("create table raw.events as select range as event_id from range(7)")
    good = "│ warehouse │ 7 events loaded, 0 quarantined │\n│ disk │ log 1.2 MB · snapshot 2.3 MB │"
    assert invariants.status_problems(home, good) == []
    wrong = "7 events loaded · log 1.2 MB · snapshot 0.3 MB"  # serve.duckdb alone
    assert invariants.status_problems(home, wrong) == ["status does not say 'snapshot 2.3 MB'"]
    assert invariants.status_problems(home, "6 events loaded · log 1.2 MB · snapshot 2.3 MB") == [
        "status does not say '7 events loaded'"
    ]


def test_a_plan_naming_a_run_the_log_never_started_is_caught():
    log = invariants.LogView([{"event_type": "run_started", "run_id": "r1", "event_id": "e1"}])
    assert invariants.plan_problems('{"run_id": "r1", "totals": {}}', log) == []
    assert invariants.plan_problems('noise\n{"run_id": "r2"}', log) == [
        "the plan names run r2, which the log never started"
    ]
    assert invariants.plan_problems('{"totals": {}}', log)[0].startswith(
        "bench plan draco --json printed no run id"
    )


def test_a_sealed_segment_left_plain_is_caught_and_a_compressed_one_is_not(tmp_path):
    from tests.warehouse.test_log_compression import items

    log = EventLog(tmp_path / "log")
    with log.writer() as writer:
        writer.append(items(0, 5))
        (open_segment,) = log.segments()
        assert invariants.plain_sealed_segments(log.log_dir) == []  # open: not sealed yet
    assert invariants.plain_sealed_segments(log.log_dir) == [open_segment.name]
    log.compress_sealed()
    assert invariants.plain_sealed_segments(log.log_dir) == []


def test_a_bucket_missing_or_changing_a_sealed_segment_is_caught_and_a_faithful_one_is_not(
    tmp_path,
):
    import zstandard

    from tests.warehouse.test_log_compression import items
    from warehouse.log_bucket import LogBucket, push, writer_id
    from warehouse.paths import BenchPaths

    home, bucket = tmp_path / "home", tmp_path / "bucket"
    log = EventLog(home / "log")
    with log.writer() as writer:
        writer.append(items(0, 5))
    push(log, LogBucket.open(str(bucket)), writer_id(BenchPaths(home)))

    def problems(builder: str) -> list[str]:
        return invariants.bucket_problems(home, bucket, tmp_path / builder, tmp_path)

    assert problems("builder-1") == []
    (first,) = (bucket / writer_id(BenchPaths(home))).glob("*.jsonl.zst")
    data = zstandard.ZstdDecompressor().stream_reader(first.read_bytes()).read()
    first.write_bytes(zstandard.ZstdCompressor().compress(data.replace(b"cites", b"CITES", 1)))
    changed = problems("builder-2")
    assert any("differs from the log's" in p for p in changed), changed
    first.unlink()
    missing = problems("builder-3")
    assert any("is not in the bucket" in p for p in missing), missing
