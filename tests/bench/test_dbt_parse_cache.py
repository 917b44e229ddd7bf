"""dbt's saved parse is shared by data roots (transform/dbt_parse_cache.py): a new root's first dbt
call reuses it instead of parsing the project in full; a change dbt checks gets its own file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from transform import dbt_parse_cache, dbt_runner
from warehouse.paths import BenchPaths

BUILD = ["dbt", "build", "--project-dir", "p"]


def key(home: Path, args: list[str] = BUILD, warehouse_db: Path | None = None, **env) -> Path:
    paths = BenchPaths.from_env(home)
    return dbt_parse_cache.cached_parse({**dbt_runner.dbt_env(paths, warehouse_db), **env}, args)


def test_two_data_roots_share_one_saved_parse(tmp_path):
    assert key(tmp_path / "a") == key(tmp_path / "b")
    paths = BenchPaths.from_env(tmp_path / "a")
    env = dbt_runner.dbt_env(paths)
    assert (env["BENCH_DUCKDB_PATH"], env["BENCH_DBT_TEMP_DIR"]) == (
        "warehouse.duckdb",
        os.path.join("dbt", "duckdb_tmp"),
    )


def test_dbt_writes_its_target_and_logs_in_the_root_whatever_the_working_directory(
    tmp_path, monkeypatch
):
    """dbt runs from the data root: a root given relative still gets absolute target and log
    folders (bench reads run_results.json and the manifest from there)."""
    monkeypatch.chdir(tmp_path)
    env = dbt_runner.dbt_env(BenchPaths(Path("relative-root")))
    assert env["DBT_TARGET_PATH"] == str(tmp_path / "relative-root" / "dbt" / "target")
    assert env["DBT_LOG_PATH"] == str(tmp_path / "relative-root" / "dbt" / "logs")
    assert env["BENCH_DUCKDB_PATH"] == "warehouse.duckdb"


def test_what_dbt_checks_before_reusing_a_parse_gets_its_own_file(tmp_path):
    """--vars, a connection setting, and a warehouse outside the root (an absolute path)."""
    home = tmp_path / "a"
    shared = key(home)
    with_vars = key(home, [*BUILD, "--vars", '{"draco_penalty_floor": -5}'])
    memory = key(home, BENCH_DBT_MEMORY_LIMIT="1GB")
    outside = key(home, warehouse_db=tmp_path / "elsewhere" / "warehouse.duckdb")
    assert len({shared, with_vars, memory, outside}) == 4
    # the scoring vars travel in the environment, which dbt does not check for the profile
    assert key(home, BENCH_SCORING_VARS='{"draco_penalty_floor": -5}') == shared


def test_restore_fills_only_an_empty_target_and_save_keeps_only_a_newer_parse(tmp_path):
    cached, target = tmp_path / "cache" / "k.msgpack", tmp_path / "target"
    dbt_parse_cache.restore(target, cached)  # nothing cached yet: nothing to do
    assert not target.exists()

    target.mkdir()
    (target / "partial_parse.msgpack").write_bytes(b"first")
    dbt_parse_cache.save(target, cached)
    assert cached.read_bytes() == b"first"

    other = tmp_path / "other-root"
    dbt_parse_cache.restore(other, cached)
    assert (other / "partial_parse.msgpack").read_bytes() == b"first"
    (other / "partial_parse.msgpack").write_bytes(b"own")
    dbt_parse_cache.restore(other, cached)  # a root's own parse is never replaced
    assert (other / "partial_parse.msgpack").read_bytes() == b"own"

    (target / "partial_parse.msgpack").write_bytes(b"old")
    os.utime(target / "partial_parse.msgpack", (1, 1))  # older than the cache: not kept
    dbt_parse_cache.save(target, cached)
    assert cached.read_bytes() == b"first"
    assert [p.name for p in cached.parent.iterdir()] == ["k.msgpack"]  # no temporary left


def test_only_the_newest_saved_parses_are_kept(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    for age in range(dbt_parse_cache.KEPT + 3):
        old = cache / f"old{age}.msgpack"
        old.write_bytes(b"x")
        os.utime(old, (1000 - age, 1000 - age))
    target = tmp_path / "target"
    target.mkdir()
    (target / "partial_parse.msgpack").write_bytes(b"new")
    dbt_parse_cache.save(target, cache / "new.msgpack")
    kept = {p.name for p in cache.iterdir()}
    assert len(kept) == dbt_parse_cache.KEPT
    assert "new.msgpack" in kept and "old0.msgpack" in kept
    assert not kept & {f"old{age}.msgpack" for age in range(15, dbt_parse_cache.KEPT + 3)}


def test_a_read_only_project_folder_keeps_nothing_and_fails_nothing(tmp_path, monkeypatch):
    target = tmp_path / "target"
    target.mkdir()
    (target / "partial_parse.msgpack").write_bytes(b"parse")

    def refuse(source, destination):
        raise PermissionError(13, "Permission denied", str(destination))

    monkeypatch.setattr(dbt_parse_cache, "_copy_atomically", refuse)
    dbt_parse_cache.save(target, tmp_path / "cache" / "k.msgpack")
    assert not (tmp_path / "cache" / "k.msgpack").exists()


@pytest.mark.slow
def test_a_new_data_roots_first_dbt_call_reuses_the_saved_parse(tmp_path, monkeypatch):
    monkeypatch.setattr(dbt_parse_cache, "CACHE_DIR", tmp_path / "parse-cache")
    # the parse messages are debug level; a user's setting wins over bench's default (info)
    monkeypatch.setenv("DBT_LOG_LEVEL_FILE", "debug")
    logs = []
    for name in ("first", "second"):
        paths = BenchPaths.from_env(tmp_path / name).ensure()
        dbt_runner.run_dbt(paths, ["parse"])
        logs.append((paths.dbt_dir / "logs" / "dbt.log").read_text(encoding="utf-8"))
    assert "saved manifest not found. Starting full parse" in logs[0]
    assert "saved manifest not found" not in logs[1]
    assert "Partial parsing enabled" in logs[1]
