import json
import shutil
from pathlib import Path

import pytest

from warehouse.events import ExtractionCompleted, ItemRegistered, make_event, parse_payload
from warehouse.log import EventLog
from warehouse.provenance import producer_for
from warehouse.upcasters import UpcastError, upcast
from warehouse.verify import verify_log

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PRODUCER = producer_for({"test": True})


def item_event(i: int, run_id: str = "run-1"):
    return make_event(
        ItemRegistered(
            item_id=f"item-{i}",
            dataset_sha256="0" * 64,
            position=i,
            ground_truth_text=f"text {i} <script>x</script> é",
            anchors=[f"text {i}"],
            anchor_rule_version="1",
        ),
        run_id=run_id,
        producer=PRODUCER,
    )


def write(log: EventLog, events) -> int:
    with log.writer() as writer:
        return writer.append(events)


@pytest.fixture
def log(tmp_path) -> EventLog:
    return EventLog(tmp_path / "log")


def test_same_fact_twice_is_a_noop(log):
    assert write(log, [item_event(i) for i in range(3)]) == 3
    assert write(log, [item_event(i) for i in range(4)]) == 1
    ids = [event["event_id"] for _, event in log.read()]
    assert len(ids) == len(set(ids)) == 4


def test_ids_derive_from_natural_keys_not_time(log):
    first, again = item_event(7), item_event(7)
    assert first.event_id == again.event_id
    assert first.event_id != item_event(7, run_id="run-2").event_id


def test_written_lines_are_canonical_and_verify(log):
    write(log, [item_event(i) for i in range(5)])
    report = verify_log(log)
    assert report.intact and report.events == 5 and report.segments == 1
    line = log.segments()[0].read_text(encoding="utf-8").splitlines()[0]
    assert (
        json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        == line
    )


@pytest.mark.parametrize(
    ("tamper", "kind", "line"),
    [
        (lambda ls: [ls[0], ls[1].replace("text 1", "text X"), *ls[2:]], "modified", 2),
        (lambda ls: [ls[0], *ls[2:]], "chain broken", 2),
        (lambda ls: [ls[0], ls[2], ls[1], *ls[3:]], "chain broken", 2),
        (lambda ls: [ls[0], ls[0], *ls[1:]], "chain broken", 2),
        (lambda ls: ls[:-1], "seal mismatch", 4),
    ],
    ids=["modified", "deleted", "reordered", "inserted", "truncated"],
)
def test_verify_names_first_bad_segment_and_line(log, tamper, kind, line):
    write(log, [item_event(i) for i in range(5)])
    segment = log.segments()[0]
    lines = segment.read_text(encoding="utf-8").splitlines()
    segment.write_text("\n".join(tamper(lines)) + "\n", encoding="utf-8")
    report = verify_log(log)
    assert not report.intact
    problem = report.problems[0]
    assert (problem.segment, problem.kind, problem.line) == (segment.name, kind, line)


def test_verify_detects_a_deleted_segment(log):
    write(log, [item_event(0)])
    write(log, [item_event(1)])
    log.segments()[0].unlink()
    assert [p.kind for p in verify_log(log).problems] == ["missing segment"]


def test_a_line_moved_to_another_segment_breaks_the_chain(log):
    write(log, [item_event(0), item_event(1)])
    write(log, [item_event(2)])
    first, second = log.segments()
    moved = first.read_text(encoding="utf-8").splitlines()[0]
    second.write_text(moved + "\n", encoding="utf-8")
    problems = verify_log(log).problems
    assert problems and problems[0].segment in {first.name, second.name}


def test_torn_final_line_is_set_aside_with_a_report_never_loaded(log):
    write(log, [item_event(0), item_event(1)])
    # A crash mid-write: an unsealed segment whose last line has no newline.
    crashed = log.log_dir / "29991231T000000000000Z-99-dead.jsonl"
    good = log.segments()[0].read_bytes().splitlines(keepends=True)
    crashed.write_bytes(b"".join(good[:0]) + b'{"event_id":"half')
    with log._manifest_lock():  # as the crashed writer did before its first line
        log._append_record({"op": "open", "segment": crashed.name, "pid": 99})
    assert [(p.kind, p.line) for p in verify_log(log).problems] == [("torn line", 1)]
    assert [line for line in log.iter_raw(crashed)] == []

    torn = log.recover()
    assert len(torn) == 1 and torn[0].segment == crashed.name
    assert torn[0].saved_to.read_bytes() == b'{"event_id":"half'
    report = json.loads(torn[0].saved_to.with_suffix(".report.json").read_text())
    assert report["bytes"] == len(b'{"event_id":"half') and "never loaded" in report["reason"]
    assert crashed.read_bytes() == b""
    assert verify_log(log).intact


def test_recover_leaves_a_live_writers_segment_alone(log):
    with log.writer() as writer:
        writer.append([item_event(0)])
        assert log.recover() == []
        assert log.segments()[0].name not in log.manifest()
    assert log.segments()[0].name in log.manifest()


def test_upcaster_lifts_the_frozen_v1_fixture(tmp_path):
    shutil.copytree(FIXTURES / "log_v1", tmp_path / "log")
    log = EventLog(tmp_path / "log")
    assert verify_log(log).intact, "the frozen fixture must stay byte-identical"
    events = [event for _, event in log.read()]
    assert [e["schema_version"] for e in events] == [2, 2]
    first = parse_payload("extraction_completed", events[0]["payload"])
    assert isinstance(first, ExtractionCompleted)
    assert (first.system, first.system_version, first.source, first.render_path) == (
        "trafilatura",
        "1.12.2",
        "engine",
        "raw_html",
    )
    assert first.settings == {"include_comments": False}
    assert parse_payload("extraction_completed", events[1]["payload"]).output_text is None
    raw = [event for _, event in log.read(upcasted=False)]
    assert raw[0]["schema_version"] == 1 and "engine" in raw[0]["payload"]


def test_upcast_refuses_events_from_the_future():
    with pytest.raises(UpcastError, match="newer than this code"):
        upcast({"event_type": "extraction_completed", "schema_version": 99, "payload": {}})


def test_payload_models_forbid_unknown_fields():
    with pytest.raises(ValueError):
        parse_payload("item_registered", {**item_event(0).payload, "surprise": 1})


def test_fast_line_is_the_canonical_json_of_the_envelope(log):
    """The writer splices the chain link into the JSON `make_event` hashed; the bytes must be
    exactly the canonical JSON of the whole envelope, nested `producer` keys included."""
    from warehouse.canonical import canonical_json

    event = make_event(
        ItemRegistered(
            item_id='x ,"producer":{"a":1} é',
            dataset_sha256="0" * 64,
            position=1,
            ground_truth_text='"prev_sha256":"no"',
            anchors=[',"producer":'],
            anchor_rule_version="1",
        ),
        run_id="run-1",
        producer=PRODUCER,
    )
    write(log, [event])
    line = log.segments()[0].read_bytes().rstrip(b"\n").decode("utf-8")
    body = event.model_dump()
    body["prev_sha256"] = json.loads(line)["prev_sha256"]
    assert line == canonical_json(body)
    assert verify_log(log).intact


def test_a_segment_no_writer_opened_is_foreign_and_never_sealed(log):
    write(log, [item_event(0)])
    elsewhere = EventLog(log.log_dir.parent / "elsewhere")  # a well-formed, chained segment
    write(elsewhere, [item_event(5)])
    forged = log.log_dir / elsewhere.segments()[0].name
    forged.write_bytes(elsewhere.segments()[0].read_bytes())
    assert log.recover() == []
    assert forged.name not in log.manifest()
    assert [(p.segment, p.kind) for p in verify_log(log).problems] == [
        (forged.name, "foreign segment")
    ]


def test_a_torn_manifest_line_is_set_aside_naming_the_file(log):
    from warehouse.log import ManifestCorrupt

    write(log, [item_event(0)])
    with open(log.manifest_path, "ab") as handle:
        handle.write(b'{"op": "seal", "segment": "x", "lin')  # killed mid-write
    problems = verify_log(log).problems
    assert [(p.segment, p.kind) for p in problems] == [("MANIFEST.jsonl", "torn line")]
    torn = log.recover()
    assert [t.segment for t in torn] == ["MANIFEST.jsonl"]
    assert torn[0].saved_to.read_bytes().endswith(b'"lin')
    assert verify_log(log).intact
    write(log, [item_event(1)])  # the log is writable again
    # a damaged line in the middle is a clear error naming the file and line, not a bare
    # "Unterminated string"
    text = log.manifest_path.read_text().splitlines()
    text[0] = text[0][:-5]
    log.manifest_path.write_text("\n".join(text) + "\n")
    with pytest.raises(ManifestCorrupt, match=r"MANIFEST.jsonl:1: not a MANIFEST record"):
        log.manifest()


def test_an_envelope_equals_its_copy_whatever_the_writer_cached():
    from warehouse.events import Envelope

    event = item_event(3)
    assert Envelope(**event.model_dump()) == event
