"""Build `raw.events` rows (docs/warehouse-contract.md) from warehouse.events models.

The ingest layer produces exactly these columns; tests and the dev warehouse insert them
directly so that the dbt project can be exercised without the log or dlt.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from warehouse.canonical import canonical_sha256
from warehouse.events import (
    DatasetRef,
    Envelope,
    ExtractionCompleted,
    ExtractionFailed,
    ItemRegistered,
    Producer,
    RunFinished,
    RunStarted,
    SystemRef,
    make_event,
)
from warehouse.ids import run_id_for

PRODUCER = Producer(package_version="0.1.0", git_sha="0" * 40, config_sha256="c" * 64)

RAW_EVENTS_DDL = """
create table if not exists raw.events (
    event_id varchar,
    event_type varchar,
    schema_version bigint,
    stored_schema_version bigint,
    run_id varchar,
    occurred_at varchar,
    producer json,
    payload json,
    content_sha256 varchar,
    prev_sha256 varchar,
    segment varchar,
    line_no bigint
)
"""

RAW_EVENTS_COLUMNS = re.findall(r"^    (\w+) \w+,?$", RAW_EVENTS_DDL, re.M)

RAW_QUARANTINE_DDL = """
create table if not exists raw.quarantined_events (
    quarantine_id varchar, segment varchar, line_no bigint, error varchar, raw_line varchar
)
"""


class Clock:
    """Deterministic, strictly increasing ISO timestamps."""

    def __init__(self, start: datetime = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)):
        self.now = start

    def tick(self) -> str:
        self.now += timedelta(seconds=1)
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class RunBuilder:
    name: str
    dataset_sha256: str
    systems: list[tuple[str, str]]
    source: str = "engine"
    benchmark: str = "extraction"
    item_count: int = 0
    clock: Clock = field(default_factory=Clock)
    events: list[Envelope] = field(default_factory=list)

    def __post_init__(self) -> None:
        spec = {"name": self.name, "systems": [s for s, _ in self.systems], "source": self.source}
        self.spec_sha256 = canonical_sha256(spec)
        self.run_id = run_id_for(self.spec_sha256)
        self._emit(
            RunStarted(
                benchmark=self.benchmark,
                source=self.source,
                spec=spec,
                spec_sha256=self.spec_sha256,
                dataset=DatasetRef(
                    name=f"{self.name}-dataset",
                    uri=f"file:///{self.name}",
                    sha256=self.dataset_sha256,
                    item_count=self.item_count,
                ),
                systems=[SystemRef(name=n, version=v) for n, v in self.systems],
                seed=7,
                argv=["bench", "run", self.name],
            )
        )

    def _emit(self, payload) -> Envelope:
        event = make_event(
            payload, run_id=self.run_id, producer=PRODUCER, occurred_at=self.clock.tick()
        )
        self.events.append(event)
        return event

    def item(
        self, item_id: str, position: int, truth: str, anchors: list[str], url: str | None = None
    ):
        return self._emit(
            ItemRegistered(
                item_id=item_id,
                dataset_sha256=self.dataset_sha256,
                position=position,
                url=url or f"https://example.test/{item_id}",
                ground_truth_text=truth,
                anchors=anchors,
                anchor_rule_version="test-1",
            )
        )

    def completed(
        self,
        item_id: str,
        system: str,
        output: str | None,
        *,
        attempt: int = 1,
        latency_ms: float | None = 100.0,
        version: str | None = None,
        output_bytes: int | None = None,
    ):
        return self._emit(
            ExtractionCompleted(
                item_id=item_id,
                system=system,
                system_version=version or self._version(system),
                attempt=attempt,
                source=self.source,
                render_path="raw_html",
                input_sha256=None,
                output_text=output,
                output_bytes=len((output or "").encode()) if output_bytes is None else output_bytes,
                latency_ms=latency_ms,
            )
        )

    def failed(
        self,
        item_id: str,
        system: str,
        *,
        attempt: int = 1,
        error_class: str = "Timeout",
        latency_ms: float | None = 30_000.0,
    ):
        return self._emit(
            ExtractionFailed(
                item_id=item_id,
                system=system,
                system_version=self._version(system),
                attempt=attempt,
                error_class=error_class,
                error_message=f"{error_class} on {item_id}",
                latency_ms=latency_ms,
            )
        )

    def finished(self, completed: int, failed: int):
        return self._emit(
            RunFinished(
                terminal_events=completed + failed,
                completed=completed,
                failed=failed,
                duration_s=1.0,
            )
        )

    def _version(self, system: str) -> str:
        return dict(self.systems).get(system, "0")


def create_raw_tables(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("create schema if not exists raw")
    con.execute(RAW_EVENTS_DDL)
    con.execute(RAW_QUARANTINE_DDL)


def insert_events(
    db_path: Path | str, events: list[Envelope], segment: str = "20261130T120000Z-1-test.jsonl"
):
    rows = []
    for line_no, event in enumerate(events, start=1):
        rows.append(
            (
                event.event_id,
                event.event_type,
                event.schema_version,
                event.schema_version,
                event.run_id,
                event.occurred_at,
                json.dumps(event.producer.model_dump()),
                json.dumps(event.payload),
                event.content_sha256,
                event.prev_sha256,
                segment,
                line_no,
            )
        )
    with duckdb.connect(str(db_path)) as con:
        create_raw_tables(con)
        columns, values = list(RAW_EVENTS_COLUMNS), "?, ?, ?, ?, ?, ?, ?::json, ?::json, ?, ?, ?, ?"
        # raw.events may be dlt's table (events ingested first), whose load id is NOT NULL
        if con.execute(
            "select count(*) from information_schema.columns where table_schema = 'raw' "
            "and table_name = 'events' and column_name = '_dlt_load_id'"
        ).fetchone()[0]:
            columns, values = [*columns, "_dlt_load_id"], f"{values}, 'inserted-by-tests'"
        con.executemany(f"insert into raw.events ({', '.join(columns)}) values ({values})", rows)
