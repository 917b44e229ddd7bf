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

from ingest.checks import SHA_RE, UUID_RE, current_versions_sql, payload_error_sql
from warehouse.canonical import sha256_hex
from warehouse.events import PAYLOAD_MODELS, parse_payload
from warehouse.log import EventLog, RawLine
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
}


@dataclass
class IngestResult:
    loaded_events: int = 0
    quarantined: int = 0
    segments_read: int = 0
    lines_read: int = 0
    upcasted: int = 0
    quarantine_samples: list[dict[str, Any]] = field(default_factory=list)


def _check_sql() -> str:
    return f"""
    with parsed as (
        select segment, line_no, line, json_valid(line) as is_json,
               case when json_valid(line) then line::json end as j
        from batch
    ), env as (
        select *,
            j->>'event_id' as event_id, j->>'event_type' as event_type,
            try_cast(j->>'schema_version' as bigint) as schema_version,
            j->>'run_id' as run_id, j->>'occurred_at' as occurred_at,
            j->'producer' as producer, j->'payload' as payload,
            j->>'content_sha256' as content_sha256, j->>'prev_sha256' as prev_sha256
        from parsed
    )
    select env.* exclude (j, is_json), current_version,
        case
            when not is_json then 'not valid JSON'
            when json_type(j) <> 'OBJECT' then 'not a JSON object'
            when event_id is null or not regexp_matches(event_id, '{UUID_RE}')
                then 'event_id: missing or not a uuid'
            when event_type is null then 'event_type: missing'
            when current_version is null then 'event_type: unknown ' || event_type
            when schema_version is null then 'schema_version: missing or not an integer'
            when schema_version > current_version
                then 'schema_version ' || schema_version || ' is newer than this code ('
                     || current_version || ')'
            when run_id is null or json_type(j, '$.run_id') <> 'VARCHAR' then 'run_id: missing'
            when try_cast(occurred_at as timestamptz) is null
                then 'occurred_at: missing or not an ISO-8601 timestamp'
            when json_type(producer) is distinct from 'OBJECT' then 'producer: missing or not an object'
            when json_type(payload) is distinct from 'OBJECT' then 'payload: missing or not an object'
            when content_sha256 is null or not regexp_matches(content_sha256, '{SHA_RE}')
                then 'content_sha256: missing or not a sha256'
            when prev_sha256 is null or not regexp_matches(prev_sha256, '{SHA_RE}')
                then 'prev_sha256: missing or not a sha256'
            when schema_version < current_version then null
            else {payload_error_sql()}
        end as error
    from env left join {current_versions_sql()} using (event_type)
    """


class _BatchChecker:
    """One in-memory DuckDB for the whole ingest: checks Arrow batches of lines."""

    def __init__(self) -> None:
        self.con = duckdb.connect()
        self.sql = _check_sql()

    def check(self, lines: list[RawLine]) -> tuple[pa.Table, list[dict[str, Any]], int]:
        texts: list[str | None] = []
        bad_utf8: list[RawLine] = []
        for raw in lines:
            try:
                texts.append(raw.data.decode("utf-8"))
            except UnicodeDecodeError:
                texts.append(None)
                bad_utf8.append(raw)
        batch = pa.table(
            {
                "segment": pa.array([r.segment for r in lines], pa.string()),
                "line_no": pa.array([r.line_no for r in lines], pa.int64()),
                "line": pa.array(texts, pa.string()),
            }
        ).filter(pa.array([t is not None for t in texts]))
        self.con.register("batch", batch)
        checked = self.con.execute(self.sql).to_arrow_table()
        self.con.unregister("batch")

        quarantine = [
            _quarantine_row(r.segment, r.line_no, "not UTF-8", r.data.decode("utf-8", "replace"))
            for r in bad_utf8
        ]
        errors = checked.filter(checked["error"].is_valid())
        for row in errors.select(["segment", "line_no", "error", "line"]).to_pylist():
            quarantine.append(_quarantine_row(row["segment"], row["line_no"], row["error"], row["line"]))

        ok = checked.filter(checked["error"].is_null())
        old = ok.filter(pa.compute.less(ok["schema_version"], ok["current_version"]))
        current = ok.filter(pa.compute.equal(ok["schema_version"], ok["current_version"]))
        events = _events_table(current)
        upcasted_rows, upcast_quarantine = _upcast_rows(old)
        quarantine.extend(upcast_quarantine)
        if upcasted_rows:
            events = pa.concat_tables([events, pa.Table.from_pylist(upcasted_rows, schema=events.schema)])
        return events, quarantine, len(upcasted_rows)


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


def _events_table(checked: pa.Table) -> pa.Table:
    columns = {
        "event_id": checked["event_id"],
        "event_type": checked["event_type"],
        "schema_version": checked["schema_version"],
        "stored_schema_version": checked["schema_version"],
        "run_id": checked["run_id"],
        "occurred_at": checked["occurred_at"],
        "producer": checked["producer"].cast(pa.string()),
        "payload": checked["payload"].cast(pa.string()),
        "content_sha256": checked["content_sha256"],
        "prev_sha256": checked["prev_sha256"],
        "segment": checked["segment"],
        "line_no": checked["line_no"],
    }
    return pa.table(columns).cast(EVENTS_SCHEMA)


def _upcast_rows(old: pa.Table) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []
    quarantine: list[dict[str, Any]] = []
    for row in old.select(["segment", "line_no", "line"]).to_pylist():
        event = json.loads(row["line"])
        try:
            lifted = upcast(event)
            parse_payload(lifted["event_type"], lifted["payload"])
        except (UpcastError, ValueError) as exc:
            quarantine.append(_quarantine_row(row["segment"], row["line_no"], f"upcast: {exc}", row["line"]))
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


def _chunks(log: EventLog, segment: Path, offset: int, line: int) -> Iterator[tuple[list[RawLine], int, int]]:
    """Complete lines after `offset`, in chunks of about CHUNK_BYTES; yields (lines, next offset, next line)."""
    batch: list[RawLine] = []
    size = 0
    for raw in log.iter_raw(segment, start_offset=offset, start_line=line):
        batch.append(raw)
        size += len(raw.data) + 1
        if size >= CHUNK_BYTES:
            yield batch, raw.offset + len(raw.data) + 1, raw.line_no + 1
            batch, size = [], 0
    if batch:
        last = batch[-1]
        yield batch, last.offset + len(last.data) + 1, last.line_no + 1


def events_source(log: EventLog, result: IngestResult, full: bool = False):
    import dlt

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
        quarantine_hints = dlt.mark.make_hints(
            table_name="quarantined_events", primary_key="quarantine_id", write_disposition=INSERT_ONLY
        )
        for segment in log.segments():
            position = state.get(segment.name, {"offset": 0, "line": 1})
            read_any = False
            for lines, next_offset, next_line in _chunks(log, segment, position["offset"], position["line"]):
                read_any = True
                table, quarantine, upcasted = checker.check(lines)
                result.lines_read += len(lines)
                result.loaded_events += table.num_rows
                result.upcasted += upcasted
                result.quarantined += len(quarantine)
                result.quarantine_samples.extend(quarantine[: max(0, 20 - len(result.quarantine_samples))])
                if table.num_rows:
                    yield table
                if quarantine:
                    yield dlt.mark.with_hints(quarantine, quarantine_hints)
                state[segment.name] = {"offset": next_offset, "line": next_line}
            result.segments_read += int(read_any)

    return events


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


def ingest_log(log: EventLog, warehouse_db: Path, pipelines_dir: Path, *, full: bool = False) -> IngestResult:
    """Load new log lines; `full=True` re-reads every line (a no-op for rows already loaded)."""
    result = IngestResult()
    pipeline = make_pipeline(warehouse_db, pipelines_dir)
    pipeline.run(events_source(log, result, full=full), loader_file_format="parquet")
    return result
