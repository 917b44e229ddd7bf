"""`app.data` outside a page: snapshot states, republish pickup, parameterized SQL, no held lock."""

from __future__ import annotations

import os
import re
from pathlib import Path

import duckdb
import pytest
from app_harness import ServeSnapshot, snapshot_rows
from fixture_app_snapshot import AppSnapshot, install, install_empty

from app import data

pytestmark = pytest.mark.slow  # the real snapshot: runners -> dlt -> dbt -> publish


def test_status_follows_the_published_file(bench_home: Path, app_source: AppSnapshot) -> None:
    serve_db = bench_home / "serve.duckdb"
    assert data.serve_db_path() == serve_db
    assert data.snapshot_status().state == "missing"

    install_empty(app_source, serve_db)
    assert data.snapshot_status().state == "empty"

    # Same path, new file (publish swaps): the mtime-keyed cache must not serve the old answer.
    install(app_source, serve_db)
    status = data.snapshot_status()
    assert status.state == "ready"
    assert status.published_at
    assert len(data.list_runs()) == len(snapshot_rows(serve_db, "select * from marts.dim_runs"))

    serve_db.unlink()
    assert data.snapshot_status().state == "missing"


def test_missing_marts_tables_count_as_empty(bench_home: Path) -> None:
    with duckdb.connect(str(bench_home / "serve.duckdb")) as con:
        con.execute("create schema marts")
        con.execute("create table marts.dim_runs (run_id varchar)")
    status = data.snapshot_status()
    assert status.state == "empty"
    assert "extraction_leaderboard" in status.missing_tables


def test_user_values_are_parameters_not_sql(serve_snapshot: ServeSnapshot) -> None:
    hostile = "x' or '1'='1"
    assert data.run_detail(hostile) is None
    assert data.run_failures(hostile).empty
    assert data.page_score(hostile, hostile, hostile) is None
    assert data.run_items(hostile, "' union select 1, 2, 3 --").empty
    assert data.events([hostile, "'); drop table marts.dim_events; --"]) == []
    assert data.leaderboard(hostile).empty
    assert not snapshot_rows(serve_snapshot.serve_db, "select * from marts.dim_events").empty


def test_no_connection_outlives_a_query(
    serve_snapshot: ServeSnapshot, app_source: AppSnapshot
) -> None:
    run_id = data.list_runs()["run_id"].iloc[0]
    assert data.run_detail(run_id) is not None
    events = data.events([data.run_detail(run_id)["run_started_event_id"]])
    assert [e["event_type"] for e in events] == ["run_started"]
    # A still-open read-only instance in this process would make a read-write open fail.
    with duckdb.connect(str(serve_snapshot.serve_db)) as con:
        assert con.execute("select count(*) from marts.dim_runs").fetchone()[0] > 0
    # A publish (os.replace onto the path) is seen by the very next call.
    replacement = serve_snapshot.serve_db.with_name("next.duckdb")
    install(app_source, replacement)
    os.replace(replacement, serve_snapshot.serve_db)
    assert data.snapshot_status().ready
    assert sorted(data.list_runs()["run_id"]) == sorted(
        snapshot_rows(serve_snapshot.serve_db, "select run_id from marts.dim_runs")["run_id"]
    )


def test_json_columns_are_parsed(serve_snapshot: ServeSnapshot) -> None:
    run = data.run_detail(data.list_runs()["run_id"].iloc[0])
    assert isinstance(run["spec"], dict)
    assert isinstance(run["argv"], list)
    assert isinstance(data.scoring_vars(), dict)
    assert data.scoring_vars()  # dim_scoring_vars holds one row per var in effect


def test_md_escape_leaves_nothing_for_markdown_to_render() -> None:
    from app.ui import md_escape

    hostile = "[click](javascript:alert(1)) ![x](http://x/y.png) <b>hi</b> :red[x] $x$ *a* `c`"
    escaped = md_escape(hostile)
    # Every ASCII punctuation character is backslash-escaped, so CommonMark shows it literally.
    assert re.sub(r"\\(.)", r"\1", escaped) == hostile
    assert not re.search(r"(?<!\\)[\[\]()<>!:$*`]", escaped)
    assert md_escape("line one\nline two") == "line one line two"
