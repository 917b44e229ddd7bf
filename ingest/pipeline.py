"""dlt pipeline: new log lines -> `raw.events` (+ `raw.quarantined_events`).

Fast path (stack-notes §2): lines are checked and unpacked by DuckDB into Arrow tables that dlt
loads without its Python normaliser. Incremental by (segment, byte offset) kept in dlt resource
state, which dlt commits together with the load; `insert-only` merge on `event_id` makes a full
re-ingest add nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ingest.checks import (
    SHA_RE,
    UUID_RE,
    current_versions_sql,
    payload_error_sql,
    payload_ok_sql,
    payload_types_sql,
)
from warehouse.canonical import sha256_hex
from warehouse.events import parse_payload
from warehouse.log import EventLog
from warehouse.upcasters import UpcastError, upcast

PIPELINE_NAME = "bench_events"
DATASET_NAME = "raw"
CHUNK_BYTES = 64 * 1024 * 1024

INSERT_ONLY = {"disposition": "merge", "strategy": "insert-only"}
EVENT_COLUMNS = {
    "producer": {"data_type": "json"},
    "payload": {"data_type": "json"},
}

_DLT_ENV = {
    "RUNTIME__DLTHUB_TELEMETRY": "false",
    "LOAD__TRUNCATE_STAGING_DATASET": "true",
    "LOAD__DELETE_COMPLETED_JOBS": "true",
    "NORMALIZE__PARQUET_NORMALIZER__ADD_DLT_LOAD_ID": "true",
    # dlt warns that Arrow hints differ from its own on every load: expected, not actionable.
    "RUNTIME__LOG_LEVEL": "ERROR",
    # Events must be extracted before the quarantine resource reads what they set aside.
    "EXTRACT__NEXT_ITEM_MODE": "fifo",
}


@dataclass
class IngestResult:
    loaded_events: int = 0
    quarantined: int = 0
    segments_read: int = 0
    lines_read: int = 0
    upcasted: int = 0
    quarantine_samples: list[dict[str, Any]] = field(default_factory=list)


ENVELOPE_STRUCT = (
    '{"event_id":"VARCHAR","event_type":"VARCHAR","schema_version":"BIGINT","run_id":"VARCHAR",'
    '"occurred_at":"VARCHAR","producer":"JSON","payload":"JSON","content_sha256":"VARCHAR",'
    '"prev_sha256":"VARCHAR"}'
)


def _check_sql() -> str:
    # Each line is parsed a fixed, small number of times (valid?, envelope, payload field
    # types), whatever the number of checks: this is what keeps ingest near read_json speed.
    return f"""
    with parsed as (
        select segment, line_no, line, json_valid(line) as is_json from batch
    ), envelope as (
        select segment, line_no, line, is_json,
               -- json_transform yields NULL fields for a non-object; this tells the two apart.
               case when is_json then left(ltrim(line), 1) = '{{' end as is_object,
               unnest(case when is_json then json_transform(line, '{ENVELOPE_STRUCT}') end)
        from parsed
    ), typed as (
        select envelope.*, current_version, {payload_types_sql()} as payload_types
        from envelope left join {current_versions_sql()} using (event_type)
    )
    select * exclude (is_json, is_object, payload_types),
        case
            when not is_json then 'not valid JSON'
            when not is_object then 'not a JSON object'
            when event_id is null or not regexp_matches(event_id, '{UUID_RE}')
                then 'event_id: missing or not a uuid'
            when event_type is null then 'event_type: missing'
            when current_version is null then 'event_type: unknown ' || event_type
            when schema_version is null then 'schema_version: missing or not an integer'
            when schema_version > current_version
                then 'schema_version ' || schema_version || ' is newer than this code ('
                     || current_version || ')'
            when run_id is null then 'run_id: missing'
            when try_cast(occurred_at as timestamptz) is null
                then 'occurred_at: missing or not an ISO-8601 timestamp'
            when json_type(producer) is distinct from 'OBJECT' then 'producer: missing or not an object'
            when json_type(payload) is distinct from 'OBJECT' then 'payload: missing or not an object'
            when content_sha256 is null or not regexp_matches(content_sha256, '{SHA_RE}')
                then 'content_sha256: missing or not a sha256'
            when prev_sha256 is null or not regexp_matches(prev_sha256, '{SHA_RE}')
                then 'prev_sha256: missing or not a sha256'
            when schema_version < current_version then null
            when {payload_ok_sql()} then null
            else {payload_error_sql()}
        end as error
    from typed
    """


class _BatchChecker:
    """One in-memory DuckDB for the whole ingest: checks Arrow batches of lines."""

    def __init__(self) -> None:
        self.con = duckdb.connect()
        self.sql = f"""
            with checked as ({_check_sql()})
            select {_EVENT_SELECT}, current_version, error,
                   case when error is not null or schema_version < current_version then line end as line
            from checked
        """

    def check(self, chunk: LineChunk) -> tuple[pa.Table, list[dict[str, Any]], int]:
        line_no = pa.array(range(chunk.first_line, chunk.first_line + len(chunk.lines)), pa.int64())
        raw = pa.array(chunk.lines, pa.binary())
        quarantine: list[dict[str, Any]] = []
        try:
            text = raw.cast(pa.string())  # validates UTF-8 in one pass
        except pa.ArrowInvalid:
            decoded = [_utf8_or_none(line) for line in chunk.lines]
            for number, (line, value) in enumerate(
                zip(chunk.lines, decoded, strict=True), chunk.first_line
            ):
                if value is None:
                    quarantine.append(
                        _quarantine_row(
                            chunk.segment, number, "not UTF-8", line.decode("utf-8", "replace")
                        )
                    )
            text = pa.array(decoded, pa.string())
        batch = pa.table(
            {
                "segment": pa.array([chunk.segment] * len(chunk.lines), pa.string()),
                "line_no": line_no,
                "line": text,
            }
        ).filter(text.is_valid())
        self.con.register("batch", batch)
        checked = self.con.execute(self.sql).to_arrow_table()
        self.con.unregister("batch")

        loadable = pc.and_kleene(
            checked["error"].is_null(),
            pc.equal(checked["schema_version"], checked["current_version"]),
        ).fill_null(False)
        events = checked.filter(loadable).select(EVENTS_SCHEMA.names).cast(EVENTS_SCHEMA)
        others = (
            checked.filter(pc.invert(loadable))
            .select(["segment", "line_no", "error", "line"])
            .to_pylist()
        )
        quarantine.extend(
            _quarantine_row(r["segment"], r["line_no"], r["error"], r["line"])
            for r in others
            if r["error"]
        )
        upcasted_rows, upcast_quarantine = _upcast_rows(
            [(r["segment"], r["line_no"], r["line"]) for r in others if not r["error"]]
        )
        quarantine.extend(upcast_quarantine)
        if upcasted_rows:
            events = pa.concat_tables(
                [events, pa.Table.from_pylist(upcasted_rows, schema=EVENTS_SCHEMA)]
            )
        return events, quarantine, len(upcasted_rows)


def _utf8_or_none(line: bytes) -> str | None:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return None


_EVENT_SELECT = (
    "event_id, event_type, schema_version, schema_version as stored_schema_version, run_id, "
    "occurred_at, producer::varchar as producer, payload::varchar as payload, content_sha256, "
    "prev_sha256, segment, line_no"
)

EVENTS_SCHEMA = pa.schema(
    [
        ("event_id", pa.string()),
        ("event_type", pa.string()),
        ("schema_version", pa.int64()),
        ("stored_schema_version", pa.int64()),
        ("run_id", pa.string()),
        ("occurred_at", pa.string()),
        ("producer", pa.string()),
        ("payload", pa.string()),
        ("content_sha256", pa.string()),
        ("prev_sha256", pa.string()),
        ("segment", pa.string()),
        ("line_no", pa.int64()),
    ]
)


def _upcast_rows(
    old: list[tuple[str, int, str]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []
    quarantine: list[dict[str, Any]] = []
    for segment, line_no, line in old:
        row = {"segment": segment, "line_no": line_no, "line": line}
        event = json.loads(line)
        try:
            lifted = upcast(event)
            parse_payload(lifted["event_type"], lifted["payload"])
        except (UpcastError, ValueError) as exc:
            quarantine.append(
                _quarantine_row(row["segment"], row["line_no"], f"upcast: {exc}", row["line"])
            )
            continue
        rows.append(
            {
                "event_id": lifted["event_id"],
                "event_type": lifted["event_type"],
                "schema_version": lifted["schema_version"],
                "stored_schema_version": event["schema_version"],
                "run_id": lifted["run_id"],
                "occurred_at": lifted["occurred_at"],
                "producer": json.dumps(lifted["producer"], sort_keys=True),
                "payload": json.dumps(lifted["payload"], sort_keys=True, ensure_ascii=False),
                "content_sha256": lifted["content_sha256"],
                "prev_sha256": lifted["prev_sha256"],
                "segment": row["segment"],
                "line_no": row["line_no"],
            }
        )
    return rows, quarantine


def _quarantine_row(segment: str, line_no: int, error: str, line: str) -> dict[str, Any]:
    return {
        "quarantine_id": sha256_hex(f"{segment}\x1f{line_no}"),
        "segment": segment,
        "line_no": line_no,
        "error": error,
        "raw_line": line,
    }


@dataclass(frozen=True)
class LineChunk:
    segment: str
    first_line: int
    lines: list[bytes]
    next_offset: int  # where the next read of this segment starts


def _chunks(segment: Path, offset: int, first_line: int) -> Iterator[LineChunk]:
    """Complete lines after `offset`, about CHUNK_BYTES at a time; a torn tail is never read."""
    with open(segment, "rb") as handle:
        handle.seek(offset)
        carry = b""
        while block := handle.read(CHUNK_BYTES):
            data = carry + block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            lines = data[: cut - 1].split(b"\n")
            offset += cut
            yield LineChunk(segment.name, first_line, lines, offset)
            first_line += len(lines)
            carry = data[cut:]


def events_source(log: EventLog, result: IngestResult, full: bool = False):
    """Two resources read in order (fifo): events first, then the lines they quarantined."""
    import dlt

    quarantined: list[dict[str, Any]] = []

    @dlt.resource(
        name="events",
        table_name="events",
        primary_key="event_id",
        write_disposition=INSERT_ONLY,
        columns=EVENT_COLUMNS,
    )
    def events() -> Iterator[Any]:
        state = dlt.current.resource_state().setdefault("segments", {})
        if full:
            state.clear()
        checker = _BatchChecker()
        for segment in log.segments():
            position = state.get(segment.name, {"offset": 0, "line": 1})
            read_any = False
            for chunk in _chunks(segment, position["offset"], position["line"]):
                read_any = True
                table, quarantine, upcasted = checker.check(chunk)
                result.lines_read += len(chunk.lines)
                result.loaded_events += table.num_rows
                result.upcasted += upcasted
                quarantined.extend(quarantine)
                if table.num_rows:
                    yield table
                state[segment.name] = {
                    "offset": chunk.next_offset,
                    "line": chunk.first_line + len(chunk.lines),
                }
            result.segments_read += int(read_any)

    @dlt.resource(
        name="quarantined_events",
        table_name="quarantined_events",
        primary_key="quarantine_id",
        write_disposition=INSERT_ONLY,
    )
    def quarantined_events() -> Iterator[Any]:
        result.quarantined = len(quarantined)
        result.quarantine_samples = quarantined[:20]
        if quarantined:
            yield quarantined

    return [events(), quarantined_events()]


def make_pipeline(warehouse_db: Path, pipelines_dir: Path):
    for key, value in _DLT_ENV.items():
        os.environ.setdefault(key, value)
    import dlt

    return dlt.pipeline(
        pipeline_name=PIPELINE_NAME,
        destination=dlt.destinations.duckdb(str(warehouse_db)),
        dataset_name=DATASET_NAME,
        pipelines_dir=str(pipelines_dir),
    )


def ingest_log(
    log: EventLog, warehouse_db: Path, pipelines_dir: Path, *, full: bool = False
) -> IngestResult:
    """Load new log lines; `full=True` re-reads every line (a no-op for rows already loaded)."""
    result = IngestResult()
    pipeline = make_pipeline(warehouse_db, pipelines_dir)
    pipeline.run(events_source(log, result, full=full), loader_file_format="parquet")
    return result
