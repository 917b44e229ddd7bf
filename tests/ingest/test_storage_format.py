"""The DuckDB files bench creates are in DuckDB's current storage format (issue #26).

A file's format is fixed in its header by whoever creates it. DuckDB's default is v1.0's
format, which stores long strings uncompressed: the event payloads, most of the warehouse's
bytes (a 100k-verdict warehouse: 1,144 MB, against 147 MB in the current format with the same
marts). dlt creates the warehouse without any such option, so ingest creates the file first;
publish and dbt get the option from dbt_project/profiles.yml.
"""

from __future__ import annotations

import duckdb

from ingest.pipeline import ingest_log
from tests.warehouse.test_log_compression import items
from warehouse.log import EventLog
from warehouse.publish import create_database, publish_snapshot

OLD_FORMAT = "v1.0.0+"
# ~18 kB bodies: the old format stores a string this long uncompressed (a report's length)
LONG = 400  # what duckdb.connect creates when nobody asks for a format


def storage_version(db) -> str:
    with duckdb.connect(str(db), read_only=True) as con:
        (tags,) = con.execute(
            "select tags from duckdb_databases() where database_name = current_database()"
        ).fetchone()
    return tags["storage_version"]


def current_format(tmp_path) -> str:
    """The format of a file DuckDB creates when asked for its latest (the installed DuckDB's)."""
    probe = tmp_path / "probe.duckdb"
    duckdb.connect(str(probe), config={"storage_compatibility_version": "latest"}).close()
    try:
        return storage_version(probe)
    finally:
        probe.unlink()


def test_ingest_creates_the_warehouse_in_the_current_format_and_compresses_payloads(tmp_path):
    log = EventLog(tmp_path / "log")
    with log.writer() as writer:
        writer.append(items(0, 3000, sentences=LONG))
    db = tmp_path / "warehouse.duckdb"
    assert ingest_log(log, db, tmp_path / "dlt").loaded_events == 3000

    assert storage_version(db) == current_format(tmp_path) != OLD_FORMAT
    with duckdb.connect(str(db), read_only=True) as con:
        methods = {
            m
            for (m,) in con.execute(
                "select distinct compression from pragma_storage_info('raw.events') "
                "where column_name = 'payload'"
            ).fetchall()
        }
        text_bytes = con.execute("select sum(strlen(payload)) from raw.events").fetchone()[0]
    assert "Uncompressed" not in methods, methods
    # the same log in a warehouse created in the old format (a data root from before)
    old = tmp_path / "old" / "warehouse.duckdb"
    old.parent.mkdir()
    duckdb.connect(str(old)).close()
    ingest_log(log, old, tmp_path / "old" / "dlt")
    assert storage_version(old) == OLD_FORMAT
    assert db.stat().st_size * 2 < old.stat().st_size, (db.stat().st_size, old.stat().st_size)
    assert old.stat().st_size > text_bytes  # the old format keeps the payload text as it is

    serve = tmp_path / "serve.duckdb"
    publish_snapshot(db, serve, {})
    assert storage_version(serve) == storage_version(db)


def test_an_existing_file_keeps_its_format_and_still_loads(tmp_path):
    db = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(db)).close()  # a data root from before: the old format
    create_database(db)
    assert storage_version(db) == OLD_FORMAT
    log = EventLog(tmp_path / "log")
    with log.writer() as writer:
        writer.append(items(0, 10, sentences=LONG))
    assert ingest_log(log, db, tmp_path / "dlt").loaded_events == 10
    assert storage_version(db) == OLD_FORMAT


def test_create_database_writes_the_current_format_and_leaves_nothing_aside(tmp_path):
    db = tmp_path / "sub" / "warehouse.duckdb"
    create_database(db)
    assert storage_version(db) == current_format(tmp_path) != OLD_FORMAT
    assert sorted(p.name for p in db.parent.iterdir()) == ["warehouse.duckdb"]
