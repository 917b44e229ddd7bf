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
from warehouse.publish import parts_dir, publish_snapshot, table_checksums


@pytest.fixture
def warehouse(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(publish, "PART_MIN_ROWS", 1000)
    db = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create schema marts")
        con.execute(
            "create table marts.dim_events as select 'e' || i as event_id, "
            "('{\"n\": ' || i || '}')::json as payload, [i, i + 1] as ids, "
            "timestamptz '2026-12-01 00:00:00+00' + to_seconds(i) as occurred_at "
            "from range(5000) t(i)"
        )
        con.execute("create table marts.leaderboard as select 'a' as system, 0.5 as score")
    return db


def _parts(serve: Path) -> dict[str, str]:
    with duckdb.connect(str(serve), read_only=True) as con:
        return dict(con.execute("select table_name, path from main._publish_parts").fetchall())


def test_a_large_mart_reads_the_same_through_its_part(warehouse, tmp_path):
    serve = tmp_path / "serve.duckdb"
    assert publish_snapshot(warehouse, serve, {}) == ["marts.dim_events", "marts.leaderboard"]
    assert list(_parts(serve)) == ["marts.dim_events"]
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
    assert kinds == {"dim_events": "VIEW", "leaderboard": "BASE TABLE"}


def test_an_unchanged_part_is_reused_and_a_changed_one_rewritten(warehouse, tmp_path):
    serve = tmp_path / "serve.duckdb"
    publish_snapshot(warehouse, serve, {})
    first = _parts(serve)["marts.dim_events"]
    publish_snapshot(warehouse, serve, {}, changed={"leaderboard"})
    assert _parts(serve)["marts.dim_events"] == first  # not written again

    with duckdb.connect(str(warehouse)) as con:
        con.execute("insert into marts.dim_events select 'x', '{}'::json, [], now() from range(1)")
    publish_snapshot(warehouse, serve, {}, changed={"dim_events"})
    second = _parts(serve)["marts.dim_events"]
    assert second != first
    assert table_checksums(serve) == table_checksums(warehouse)
    # the previous snapshot's part survives this publish (a reader may be in a query over it)
    assert Path(first).exists()
    publish_snapshot(warehouse, serve, {}, changed={"dim_events"})
    assert not Path(first).exists() and Path(second).exists()
    assert sorted(p.name for p in parts_dir(serve).iterdir()) == sorted(
        Path(p).name for p in (second, _parts(serve)["marts.dim_events"])
    )


def test_the_sql_prompt_reads_parts_and_nothing_else_on_disk(warehouse, tmp_path):
    serve = tmp_path / "serve.duckdb"
    publish_snapshot(warehouse, serve, {})
    con = open_snapshot(serve)
    assert run_query(con, "select count(*) as n from marts.dim_events").to_pylist() == [{"n": 5000}]
    with pytest.raises(ExportError, match="disabled by configuration"):
        run_query(con, f"select * from read_csv('{warehouse}')")
