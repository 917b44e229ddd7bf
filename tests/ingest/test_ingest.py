import json
import shutil
from pathlib import Path

import duckdb
import pytest

from ingest.pipeline import ingest_log
from warehouse.events import ItemRegistered, make_event
from warehouse.log import EventLog
from warehouse.provenance import producer_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PRODUCER = producer_for({"test": "ingest"})


def item(i: int):
    return make_event(
        ItemRegistered(
            item_id=f"item-{i}",
            dataset_sha256="0" * 64,
            position=i,
            ground_truth_text=f"body {i}",
            anchors=[f"body {i}"],
            anchor_rule_version="1",
        ),
        run_id="run-ingest",
        producer=PRODUCER,
    )


@pytest.fixture
def env(tmp_path):
    log = EventLog(tmp_path / "log")
    db = tmp_path / "warehouse.duckdb"

    def load(full: bool = False):
        return ingest_log(log, db, tmp_path / "dlt", full=full)

    def query(sql: str):
        with duckdb.connect(str(db), read_only=True) as con:
            return con.execute(sql).fetchall()

    return log, load, query


def append(log: EventLog, events) -> None:
    with log.writer() as writer:
        writer.append(events)


def test_incremental_and_reingest_adds_no_rows(env):
    log, load, query = env
    append(log, [item(i) for i in range(10)])
    assert load().loaded_events == 10
    append(log, [item(i) for i in range(10, 15)])
    second = load()
    assert (second.lines_read, second.loaded_events) == (5, 5)
    assert load().lines_read == 0
    assert load(full=True).lines_read == 15
    assert query("select count(*), count(distinct event_id) from raw.events") == [(15, 15)]


def test_payload_stays_json_and_lineage_columns_point_at_the_log(env):
    log, load, query = env
    append(log, [item(0)])
    load()
    segment = log.segments()[0].name
    rows = query(
        "select payload->>'ground_truth_text', segment, line_no, typeof(payload) from raw.events"
    )
    assert rows == [("body 0", segment, 1, "JSON")]


BAD_LINES = {
    b"this is not json": "not valid JSON",
    b"[1, 2]": "not a JSON object",
    b'{"event_id": "x"}': "event_id: missing or not a uuid",
}


def test_invalid_lines_are_quarantined_with_file_line_and_reason(env):
    log, load, query = env
    good = {**item(0).model_dump(), "prev_sha256": "0" * 64}
    unknown = {**good, "event_id": "00000000-0000-5000-8000-000000000001", "event_type": "made_up"}
    missing = {
        **good,
        "event_id": "00000000-0000-5000-8000-000000000002",
        "payload": {"item_id": "x"},
    }
    wrong_type = {
        **good,
        "event_id": "00000000-0000-5000-8000-000000000003",
        "payload": {**good["payload"], "position": "first"},
    }
    append(log, [item(1)])
    segment = log.segments()[0]
    with open(segment, "ab") as handle:
        for line in [*BAD_LINES, *(json.dumps(e).encode() for e in (unknown, missing, wrong_type))]:
            handle.write(line + b"\n")
    append(log, [item(2)])  # the load continues past bad lines, into later segments

    result = load()
    assert (result.loaded_events, result.quarantined) == (2, 6)
    errors = dict(
        query(f"select line_no, error from raw.quarantined_events where segment = '{segment.name}'")
    )
    assert errors[2] == "not valid JSON" and errors[3] == "not a JSON object"
    assert errors[4] == "event_id: missing or not a uuid"
    assert errors[5] == "event_type: unknown made_up"
    assert errors[6].startswith("payload.dataset_sha256: missing")
    assert errors[7] == "payload.position: expected JSON type BIGINT/UBIGINT, got VARCHAR"
    assert load(full=True).loaded_events == 2
    assert query("select count(*) from raw.quarantined_events") == [(6,)]


def test_old_schema_versions_are_upcast_on_load(env, tmp_path):
    log, load, query = env
    shutil.copytree(FIXTURES / "log_v1", log.log_dir)
    assert load().upcasted == 2
    rows = query(
        "select schema_version, stored_schema_version, payload->>'system', payload->>'render_path' "
        "from raw.events order by line_no"
    )
    assert rows == [(2, 1, "trafilatura", "raw_html")] * 2


def test_v1_grades_are_upcast_to_an_outcome_and_v1_grader_failures_still_load(env):
    """Frozen v1 QA grades (parse_ok only) gain the outcome their parse flag says; the failed
    grader call v1 logged as provider_call_failed loads as it was (the marts read it)."""
    log, load, query = env
    shutil.copytree(FIXTURES / "log_v1_grades", log.log_dir)
    assert load().upcasted == 3
    rows = query(
        "select event_type, schema_version, stored_schema_version, payload->>'item_id', "
        "payload->>'outcome', payload->>'stage' from raw.events order by line_no"
    )
    assert rows == [
        ("answer_graded", 2, 1, "q1", "parsed", None),
        ("answer_graded", 2, 1, "q2", "unparsed", None),
        ("relevance_graded", 2, 1, "q1", "parsed", None),
        ("provider_call_failed", 1, 1, "q3", None, "grade"),
    ]  # all four loaded: nothing quarantined


def test_torn_tail_is_never_loaded(env):
    log, load, query = env
    append(log, [item(0)])
    torn = log.log_dir / "29991231T000000000000Z-1-torn.jsonl"
    torn.write_bytes(json.dumps(item(1).model_dump()).encode()[:40])
    assert load().loaded_events == 1
    assert query("select count(*) from raw.events") == [(1,)]


def test_non_utf8_and_newer_version_lines_are_quarantined(env):
    log, load, query = env
    newer = {**item(3).model_dump(), "schema_version": 99}
    append(log, [item(0)])
    segment = log.segments()[0]
    with open(segment, "ab") as handle:
        handle.write(b'{"event_id": "\xff\xfe"}\n')
        handle.write(json.dumps(newer).encode() + b"\n")
    append(log, [item(1)])
    result = load()
    assert (result.loaded_events, result.quarantined) == (2, 2)
    errors = dict(
        query(f"select line_no, error from raw.quarantined_events where segment = '{segment.name}'")
    )
    assert errors[2] == "not UTF-8"
    assert errors[3] == "schema_version 99 is newer than this code (1)"


def test_small_chunks_keep_line_numbers_and_offsets(env, monkeypatch):
    import ingest.pipeline

    log, load, query = env
    monkeypatch.setattr(ingest.pipeline, "CHUNK_BYTES", 700)  # a few lines per chunk
    append(log, [item(i) for i in range(12)])
    append(log, [item(i) for i in range(12, 20)])
    assert load().loaded_events == 20
    append(log, [item(i) for i in range(20, 23)])
    second = load()
    assert (second.lines_read, second.loaded_events) == (3, 3)
    assert load(full=True).lines_read == 23
    rows = query("select segment, line_no, payload->>'item_id' from raw.events")
    segments = sorted({segment for segment, _, _ in rows})
    by_item = {item_id: (segments.index(segment), line_no) for segment, line_no, item_id in rows}
    assert len(rows) == 23
    assert by_item["item-0"] == (0, 1) and by_item["item-11"] == (0, 12)
    assert by_item["item-12"] == (1, 1) and by_item["item-22"] == (2, 3)
