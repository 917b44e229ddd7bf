"""Large marts are published as Parquet parts behind views (warehouse/publish.py): the snapshot
reads the same rows and types as the warehouse, a part is rewritten only when its table changed,
and a part the previous snapshot still reads survives one more publish."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from bench.export import ExportError
from bench.sql_cli import open_snapshot, run_query
from warehouse import publish
from warehouse.publish import parts_dir, publish_snapshot, snapshot_parts, table_checksums


@pytest.fixture
def warehouse(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(publish, "PART_MIN_ROWS", 1000)
    db = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create schema marts")
        con.execute(
            "create table marts.dim_events as select 'e' || i as event_id, "
            "('{\"n\": ' || i || '}')::json as payload, [i, i + 1] as ids, "
            "timestamptz '2026-12-01 00:00:00+00' + to_seconds(i) as occurred_at, "
            "'seg-' || lpad((i // 1000)::varchar, 4, '0') as segment, i % 1000 as line_no "
            "from range(5000) t(i)"
        )
        con.execute(
            "create table marts.fct_samples as select 'e' || i as event_id, i % 7 as score "
            "from range(3000) t(i)"
        )
        con.execute("create table marts.leaderboard as select 'a' as system, 0.5 as score")
    return db


def _parts(serve: Path) -> dict[str, list[str]]:
    """The part files the snapshot reads, per table, in the order written."""
    return {table: [p.path for p in parts] for table, parts in snapshot_parts(serve).items()}


def _rows_in(part: str) -> int:
    return duckdb.sql(f"select count(*) from read_parquet('{part}')").fetchone()[0]


def _add_events(db: Path, first: int, count: int) -> None:
    with duckdb.connect(str(db)) as con:
        con.execute(
            "insert into marts.dim_events select 'e' || i, ('{\"n\": ' || i || '}')::json, "
            "[i], timestamptz '2026-12-01 00:00:00+00', "
            "'seg-' || lpad((i // 1000)::varchar, 4, '0'), i % 1000 from range(?, ?) t(i)",
            [first, first + count],
        )


def test_a_large_mart_reads_the_same_through_its_part(warehouse, tmp_path):
    serve = tmp_path / "serve.duckdb"
    assert publish_snapshot(warehouse, serve, {}) == [
        "marts.dim_events",
        "marts.fct_samples",
        "marts.leaderboard",
    ]
    assert list(_parts(serve)) == ["marts.dim_events", "marts.fct_samples"]
    assert table_checksums(serve) == table_checksums(warehouse)
    typed = "select typeof(payload), typeof(ids), typeof(occurred_at) from marts.dim_events limit 1"
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute(typed).fetchone() == ("JSON", "BIGINT[]", "TIMESTAMP WITH TIME ZONE")
    with duckdb.connect(str(serve), read_only=True) as con:
        # Parquet has no JSON type: the view casts every column back to the warehouse's type
        assert con.execute(typed).fetchone() == ("JSON", "BIGINT[]", "TIMESTAMP WITH TIME ZONE")
        kinds = dict(
            con.execute(
                "select table_name, table_type from information_schema.tables "
                "where table_schema = 'marts'"
            ).fetchall()
        )
    assert kinds == {"dim_events": "VIEW", "fct_samples": "VIEW", "leaderboard": "BASE TABLE"}


def test_the_part_threshold_is_read_at_each_publish(warehouse, tmp_path, monkeypatch):
    # after import, as in a process that lives on: 3,000 rows are a part only once it says so
    monkeypatch.setenv("BENCH_PUBLISH_PART_MIN_ROWS", "4000")
    publish_snapshot(warehouse, tmp_path / "a.duckdb", {})
    assert sorted(_parts(tmp_path / "a.duckdb")) == ["marts.dim_events"]
    monkeypatch.setenv("BENCH_PUBLISH_PART_MIN_ROWS", "2000")
    publish_snapshot(warehouse, tmp_path / "b.duckdb", {})
    assert sorted(_parts(tmp_path / "b.duckdb")) == ["marts.dim_events", "marts.fct_samples"]


def test_an_unchanged_part_is_reused_and_a_changed_one_rewritten(warehouse, tmp_path):
    serve = tmp_path / "serve.duckdb"
    publish_snapshot(warehouse, serve, {})
    [first] = _parts(serve)["marts.fct_samples"]
    publish_snapshot(warehouse, serve, {}, changed={"leaderboard"})
    assert _parts(serve)["marts.fct_samples"] == [first]  # not written again

    with duckdb.connect(str(warehouse)) as con:
        con.execute("update marts.fct_samples set score = score + 1 where event_id = 'e7'")
    publish_snapshot(warehouse, serve, {}, changed={"fct_samples"})
    [second] = _parts(serve)["marts.fct_samples"]
    assert second != first
    assert table_checksums(serve) == table_checksums(warehouse)
    # the previous snapshot's part survives this publish (a reader may be in a query over it)
    assert Path(first).exists()
    publish_snapshot(warehouse, serve, {}, changed={"fct_samples"})
    [third] = _parts(serve)["marts.fct_samples"]
    assert not Path(first).exists() and Path(second).exists()
    assert sorted(p.name for p in parts_dir(serve).iterdir()) == sorted(
        Path(p).name for p in (second, third, *_parts(serve)["marts.dim_events"])
    )


def test_new_events_are_published_as_a_part_of_their_own(warehouse, tmp_path):
    serve = tmp_path / "serve.duckdb"
    publish_snapshot(warehouse, serve, {}, generation="g1")
    [base] = _parts(serve)["marts.dim_events"]
    _add_events(warehouse, 5000, 30)
    publish_snapshot(warehouse, serve, {}, changed={"dim_events"}, generation="g1")
    parts = _parts(serve)["marts.dim_events"]
    assert parts[0] == base and len(parts) == 2
    assert [_rows_in(p) for p in parts] == [5000, 30]  # the million payloads are not rewritten
    assert table_checksums(serve) == table_checksums(warehouse)
    # nothing new: no empty part, the same files
    publish_snapshot(warehouse, serve, {}, changed={"dim_events"}, generation="g1")
    assert _parts(serve)["marts.dim_events"] == parts
    assert table_checksums(serve) == table_checksums(warehouse)


@pytest.mark.parametrize(
    "change",
    ["rebuilt", "one replaced", "one lost", "other generation", "another column"],
)
def test_parts_that_do_not_add_up_are_written_again_whole(warehouse, tmp_path, change):
    """An increment is kept only while the parts and it hold exactly the table: anything
    else (a rebuild, a lost or replaced event, changed models or columns) is one whole part."""
    serve = tmp_path / "serve.duckdb"
    publish_snapshot(warehouse, serve, {}, generation="g1")
    _add_events(warehouse, 5000, 30)
    publish_snapshot(warehouse, serve, {}, changed={"dim_events"}, generation="g1")
    generation = "g1"
    with duckdb.connect(str(warehouse)) as con:
        if change == "rebuilt":  # the same events, written again with other contents
            con.execute("update marts.dim_events set payload = '{\"rebuilt\": 1}'::json")
            generation = "g2"
        elif change == "one replaced":
            con.execute("delete from marts.dim_events where event_id = 'e1'")
            _add_events(warehouse, 9000, 1)
        elif change == "one lost":
            con.execute("delete from marts.dim_events where event_id = 'e1'")
        elif change == "other generation":
            con.execute("update marts.dim_events set ids = [0] where event_id = 'e2'")
            generation = "g2"
        else:
            con.execute("alter table marts.dim_events add column flag boolean default true")
    publish_snapshot(warehouse, serve, {}, changed={"dim_events"}, generation=generation)
    [whole] = _parts(serve)["marts.dim_events"]
    assert (
        _rows_in(whole)
        == duckdb.connect(str(warehouse), read_only=True)
        .sql("select count(*) from marts.dim_events")
        .fetchone()[0]
    )
    assert table_checksums(serve) == table_checksums(warehouse)


def test_the_parts_of_a_table_are_written_again_as_one_every_max_parts(warehouse, tmp_path):
    serve = tmp_path / "serve.duckdb"
    publish_snapshot(warehouse, serve, {})
    counts = []
    for step in range(publish.MAX_PARTS + 1):
        _add_events(warehouse, 10_000 + step * 10, 10)
        publish_snapshot(warehouse, serve, {}, changed={"dim_events"})
        counts.append(len(_parts(serve)["marts.dim_events"]))
    assert counts == [*range(2, publish.MAX_PARTS + 1), 1, 2]
    assert table_checksums(serve) == table_checksums(warehouse)


def test_the_sql_prompt_reads_parts_and_nothing_else_on_disk(warehouse, tmp_path):
    serve = tmp_path / "serve.duckdb"
    publish_snapshot(warehouse, serve, {})
    con = open_snapshot(serve)
    assert run_query(con, "select count(*) as n from marts.dim_events").to_pylist() == [{"n": 5000}]
    with pytest.raises(ExportError, match="disabled by configuration"):
        run_query(con, f"select * from read_csv('{warehouse}')")
