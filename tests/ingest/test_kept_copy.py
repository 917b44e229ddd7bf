"""One fact stated on two machines: two logs hold copies of the same event ids that differ in
their bytes (here the producer, as a clock or a command line would). Whatever the order the
logs are loaded in, and whether in one load or two, `raw.events` keeps for every id the copy
with the smallest content_sha256 (ingest/copies.py), also when the ingest that loaded the
winning copy died before comparing it."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import ingest.pipeline
from ingest.copies import REPLACED_COPIES, copies_replaced
from ingest.pipeline import ingest_log
from tests.log_files import item_events
from warehouse.lake import open_warehouse
from warehouse.log import EventLog

EVENTS = 40


def machine_log(root: Path, machine: str) -> EventLog:
    """The same 40 facts (one run's items), written by `machine`."""
    log = EventLog(root / machine / "log")
    with log.writer() as writer:
        writer.append(item_events("run-on-two-machines", 0, EVENTS, tool=machine))
    return log


def kept(warehouse: Path) -> dict[str, str]:
    with open_warehouse(warehouse, read_only=True) as con:  # the local file, or the lake
        rows = con.execute("select event_id, content_sha256 from raw.events").fetchall()
    assert len(rows) == len({event_id for event_id, _ in rows})  # one row per id
    return dict(rows)


def copies(log: EventLog) -> dict[str, str]:
    return {event["event_id"]: event["content_sha256"] for _, event in log.read()}


@pytest.fixture
def two_machines(tmp_path: Path) -> dict[str, EventLog]:
    logs = {machine: machine_log(tmp_path, machine) for machine in ("a", "b")}
    a, b = copies(logs["a"]), copies(logs["b"])
    assert a.keys() == b.keys() and all(a[i] != b[i] for i in a)
    assert 0 < sum(b[i] < a[i] for i in a) < EVENTS  # each machine's copy wins for some ids
    return logs


def rule(logs: dict[str, EventLog]) -> dict[str, str]:
    a, b = copies(logs["a"]), copies(logs["b"])
    return {i: min(c for c in (a.get(i), b.get(i)) if c) for i in a.keys() | b.keys()}


@pytest.mark.parametrize(
    ("order", "on"),
    [(("a", "b"), "local"), (("b", "a"), "local"), (("a+b",), "local"), (("b", "a"), "lake")],
)
def test_every_load_order_keeps_the_copy_with_the_smallest_content_hash(
    tmp_path: Path, two_machines, order, on, monkeypatch
) -> None:
    if on == "lake":  # a DuckLake with a local catalog file (BENCH_WAREHOUSE, docs/team.md)
        (tmp_path / "lake").mkdir()
        monkeypatch.setenv("BENCH_WAREHOUSE", f"ducklake:{tmp_path / 'lake' / 'catalog.ducklake'}")
        monkeypatch.setenv("BENCH_LAKE_DATA", str(tmp_path / "lake" / "data"))
    warehouse, dlt_dir = tmp_path / "warehouse.duckdb", tmp_path / "dlt"
    loaded: list[EventLog] = []
    replaced = 0
    for step in order:
        loaded += [two_machines[m] for m in step.split("+")]
        replaced += ingest_log(loaded, warehouse, dlt_dir).copies_replaced
    assert kept(warehouse) == rule(two_machines)
    if len(order) == 2:  # the later machine's winning copies replaced the earlier's rows
        first, later = (copies(two_machines[m]) for m in order)
        wins = {i for i in first if later[i] < first[i]}
        assert replaced == copies_replaced(warehouse) == len(wins) > 0
        with open_warehouse(warehouse, read_only=True) as con:
            recorded = con.execute(
                f"select event_id, replaced_content_sha256, kept_content_sha256 "
                f"from {REPLACED_COPIES}"
            ).fetchall()
        assert sorted(recorded) == sorted((i, first[i], later[i]) for i in wins)
    else:  # one load: nothing was loaded before, nothing replaced
        assert replaced == copies_replaced(warehouse) == 0
    again = ingest_log(loaded, warehouse, dlt_dir, full=True)  # every line read again
    assert again.copies_replaced == 0 and kept(warehouse) == rule(two_machines)


def test_a_load_that_died_before_comparing_is_compared_by_the_next_ingest(
    tmp_path: Path, two_machines, monkeypatch
) -> None:
    """dlt recorded b's load, then the ingest died before ingest/copies.py compared b's staged
    copies with a's rows: the next ingest compares them first."""
    warehouse, dlt_dir = tmp_path / "warehouse.duckdb", tmp_path / "dlt"
    both = [two_machines["a"], two_machines["b"]]
    ingest_log(both[:1], warehouse, dlt_dir)
    real = ingest.pipeline.settle_staged_copies

    def dies_after_the_load(db, staging):
        with duckdb.connect(str(db), read_only=True) as con:
            (staged,) = con.execute(f"select count(*) from {staging}.events").fetchone()
        if staged:  # called right after dlt recorded the load of b's lines
            raise KeyboardInterrupt("killed after dlt recorded the load")
        return real(db, staging)

    monkeypatch.setattr(ingest.pipeline, "settle_staged_copies", dies_after_the_load)
    with pytest.raises(KeyboardInterrupt):
        ingest_log(both, warehouse, dlt_dir)
    monkeypatch.undo()
    assert kept(warehouse) == copies(two_machines["a"])  # b's copies: staged, not compared yet

    with two_machines["a"].writer() as writer:  # a collector goes on writing: a new load
        writer.append(item_events("run-on-two-machines", EVENTS, 5, tool="a"))
    after = ingest_log(both, warehouse, dlt_dir)
    assert after.lines_read == 5  # b's lines were loaded before: only compared now
    assert after.copies_replaced == copies_replaced(warehouse) > 0
    assert kept(warehouse) == rule(two_machines)


def test_copies_two_loads_inserted_side_by_side_keep_the_rule_and_force_a_refresh(
    tmp_path: Path, two_machines
) -> None:
    """Two loaders racing on a lake can each insert their copy of one id (each merge saw it
    absent): the next ingest keeps the rule's copy and records the other, whose rows may have
    fed the models already, so the next build refreshes every model."""
    warehouse, dlt_dir = tmp_path / "warehouse.duckdb", tmp_path / "dlt"
    ingest_log([two_machines["a"]], warehouse, dlt_dir)
    with duckdb.connect(str(warehouse)) as con:  # b's copies, as the other loader left them
        con.execute(
            "insert into raw._dlt_loads (load_id, schema_name, status, inserted_at) "
            "values ('other-loader', 'bench_events', 0, now())"
        )
        for event in (event for _, event in two_machines["b"].read()):
            con.execute(
                "insert into raw.events by name select ? as event_id, ? as content_sha256, "
                "'b-segment' as segment, 1 as line_no, 'other-loader' as _dlt_load_id, "
                "event_type, schema_version, stored_schema_version, run_id, occurred_at, "
                "producer, payload, prev_sha256 from raw.events where event_id = ?",
                [event["event_id"], event["content_sha256"], event["event_id"]],
            )
    assert copies_replaced(warehouse) == 0
    again = ingest_log([two_machines["a"]], warehouse, dlt_dir)
    assert again.duplicates_removed == EVENTS
    assert kept(warehouse) == rule(two_machines)
    assert copies_replaced(warehouse) == EVENTS  # every id had a copy of each load
