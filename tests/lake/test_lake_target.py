"""The lake setting (warehouse/lake.py): how BENCH_WAREHOUSE is read, and that DuckDB's lake
extensions come from the `lake` extra's wheels, never from the network."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from warehouse import lake


def test_unset_or_duckdb_means_the_local_file() -> None:
    assert lake.lake_target({}) is None
    assert lake.lake_target({"BENCH_WAREHOUSE": "duckdb", "BENCH_LAKE_DATA": "/x"}) is None


def test_a_local_catalog_and_folder_are_made_absolute(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    target = lake.lake_target({"BENCH_WAREHOUSE": "ducklake:c.ducklake", "BENCH_LAKE_DATA": "d"})
    assert target == lake.LakeTarget(str(tmp_path / "c.ducklake"), f"{tmp_path / 'd'}/")
    assert target.is_local
    assert target.attach_sql() == (
        f"ATTACH IF NOT EXISTS 'ducklake:{tmp_path / 'c.ducklake'}' AS warehouse "
        f"(DATA_PATH '{tmp_path / 'd'}/')"
    )


def test_a_postgres_catalog_names_the_metadata_schema_dlt_uses() -> None:
    target = lake.lake_target(
        {
            "BENCH_WAREHOUSE": "ducklake:postgres:dbname=bench host=db",
            "BENCH_LAKE_DATA": "s3://bucket/lake",
        }
    )
    assert not target.is_local
    assert target.attach_sql(read_only=True) == (
        "ATTACH IF NOT EXISTS 'ducklake:postgres:dbname=bench host=db' AS warehouse "
        "(DATA_PATH 's3://bucket/lake', METADATA_SCHEMA 'warehouse', READ_ONLY)"
    )


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"BENCH_WAREHOUSE": "postgres://db/bench"}, "expected `duckdb` (the default) or"),
        ({"BENCH_WAREHOUSE": "ducklake:"}, "ducklake:<catalog>"),
        ({"BENCH_WAREHOUSE": "ducklake:/srv/c.ducklake"}, "BENCH_LAKE_DATA is not set"),
    ],
)
def test_a_setting_that_cannot_work_is_refused_naming_the_variable(env, says) -> None:
    with pytest.raises(lake.LakeError, match="BENCH_") as error:
        lake.lake_target(env)
    assert says in str(error.value)


def test_the_extensions_load_from_the_wheels_with_downloads_off(tmp_path: Path) -> None:
    lake.ensure_extensions()
    target = lake.LakeTarget(str(tmp_path / "c.ducklake"), f"{tmp_path / 'data'}/")
    with lake.connect(target) as con:
        con.execute("create schema raw; create table raw.t as select 42 as v")
        # more rows than the lake inlines into its catalog: these go to Parquet files
        con.execute("create table raw.big as select range as i from range(100000)")
        assert con.execute("select current_database()").fetchone() == (lake.LAKE_ALIAS,)
        assert con.execute("select current_setting('autoinstall_known_extensions')").fetchone()[
            0
        ] in (False, "false")
        (path,) = con.execute(
            "select install_path from duckdb_extensions() where extension_name = 'ducklake'"
        ).fetchone()
        assert Path(path).name == "ducklake.duckdb_extension"
    with lake.connect(target, read_only=True) as con:
        assert con.execute("select v from raw.t").fetchall() == [(42,)]
        with pytest.raises(duckdb.Error, match="attached in read-only mode"):
            con.execute("insert into raw.t values (1)")
    assert list((tmp_path / "data" / "raw" / "big").glob("*.parquet"))  # in the data folder


def test_a_wheel_built_for_another_duckdb_is_named(monkeypatch, tmp_path: Path) -> None:
    package = tmp_path / "duckdb_extension_fake"
    (package / "extensions" / "v0.0.1").mkdir(parents=True)
    (package / "extensions" / "v0.0.1" / "fake.duckdb_extension").write_bytes(b"")
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(lake.LakeError, match="carries no extension for DuckDB") as error:
        lake._wheel_extension_file("duckdb_extension_fake")
    assert "v0.0.1" in str(error.value)
    with pytest.raises(lake.LakeError, match=r"pip install 'bench-warehouse\[lake\]'"):
        lake._wheel_extension_file("duckdb_extension_not_installed")
