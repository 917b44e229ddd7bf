"""Which copy of an event the warehouse keeps when two copies of one id differ.

An event's id is a hash of its natural key, so one fact stated on two machines has one id: the
same whole run executed on both (without `--shard`), the same import or correction made on
each. The copies differ in their clock and command line. `raw.events` holds one row per id, and
the one it holds must not depend on the order the logs arrive in: a rebuild reads every log in
one load, and it must keep the copy the incremental warehouse kept, or the marts of the two
differ. The rule is a rule of the events alone: **the copy with the smallest `content_sha256`**
(copies of equal content: by segment, then line).

Rows of one id found side by side (one load's copies; or two loads that each inserted theirs,
as loaders racing on a lake can) are settled by `dedupe_events`, which records a loser of an
earlier load as replaced. Across loads, dlt's insert-only merge skips a copy
whose id is already loaded, so it is caught in dlt's staging table (kept after the load for
this, then cleared): a copy that wins under the rule replaces the row, and the replacement is
recorded in `raw.replaced_copies` in the same transaction. The models read a replaced row as
new, but incremental tables already hold what the old copy fed, so the build after a
replacement is a full refresh (transform/dbt_build.py counts the table's rows). Rare: two
machines doing the same work.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import duckdb

from warehouse.lake import open_warehouse, warehouse_exists

REPLACED_COPIES = "raw.replaced_copies"
# The order of the rule: the smallest content hash; copies of equal content (the same bytes in
# two places) by where they are, so the choice never depends on the order of loads either.
RULE = "content_sha256, segment, line_no"


def _exists(con, schema: str, table: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = ? and table_name = ?",
            [schema, table],
        ).fetchone()[0]
    )


def dedupe_events(warehouse_db: Path) -> int:
    """Keep one row per event_id in raw.events, the rule's copy (rows of one id loaded together:
    the same line twice, or two machines' copies); returns how many were removed. One scan of
    the id column when there are none."""
    if not warehouse_exists(Path(warehouse_db)):
        return 0
    with open_warehouse(Path(warehouse_db)) as con:
        if not _exists(con, "raw", "events"):
            return 0
        total, distinct = con.execute(
            "select count(*), count(distinct event_id) from raw.events"
        ).fetchone()
        if total == distinct:
            return 0
        with _transaction(con):
            _drop_losers(con)
        return total - distinct


def _drop_losers(con) -> None:
    con.execute(
        f"""create or replace temp table ranked as
            select rowid as row_id, event_id, content_sha256, segment, line_no, _dlt_load_id,
                   row_number() over (partition by event_id order by {RULE}, rowid) as n
            from raw.events
            qualify count(*) over (partition by event_id) > 1"""
    )
    # a copy of an earlier load that loses (loads racing on a lake, a killed load's rows): its
    # rows may have fed the models already
    _record_replaced(
        con,
        """select r.event_id, r.content_sha256, r.segment, r.line_no, r._dlt_load_id,
                  k.content_sha256, k.segment, k.line_no, k._dlt_load_id
           from ranked r join ranked k on k.event_id = r.event_id and k.n = 1
           where r.n > 1 and r._dlt_load_id <> k._dlt_load_id
             and r.content_sha256 <> k.content_sha256""",
    )
    con.execute("delete from raw.events where rowid in (select row_id from ranked where n > 1)")
    con.execute("drop table ranked")


def settle_staged_copies(warehouse_db: Path, staging_schema: str) -> int:
    """After a load: every staged copy of an id already loaded that wins under the rule replaces
    the loaded row; then the staging table is cleared. Returns how many rows were replaced.

    Only copies of a load dlt recorded as done are settled: a load killed before that is
    discarded and its lines read again (ingest/recovery.py), so its staged rows are not facts
    yet. Cheap when no copy was skipped: the staged rows' load ids against the rows they
    inserted."""
    if not warehouse_exists(Path(warehouse_db)):
        return 0
    staged = f"{staging_schema}.events"
    with open_warehouse(Path(warehouse_db)) as con:
        if not (_exists(con, staging_schema, "events") and _exists(con, "raw", "events")):
            return 0
        done = (
            f"select * from {staged} where _dlt_load_id in "
            "(select load_id from raw._dlt_loads where status = 0)"
        )
        n_staged, n_done = con.execute(
            f"select count(*), count(*) filter (where _dlt_load_id in "
            f"(select load_id from raw._dlt_loads where status = 0)) from {staged}"
        ).fetchone()
        if n_staged == 0:
            return 0
        (n_inserted,) = con.execute(
            "select count(*) from raw.events where _dlt_load_id in "
            f"(select distinct _dlt_load_id from ({done}))"
        ).fetchone()
        replaced = 0
        if n_done and n_inserted < n_done:  # some staged copy was skipped as already loaded
            replaced = _replace_by_rule(con, done)
        con.execute(f"delete from {staged}")
        return replaced


def _replace_by_rule(con, done: str) -> int:
    # rows carry their segment and line; a lake's tables are written in row groups bounded by
    # bytes, which DuckDB refuses while it preserves insertion order
    con.execute("set preserve_insertion_order = false")
    with _transaction(con):
        con.execute(
            f"""create or replace temp table winners as
            select s.* from ({done}) s
            where exists (select 1 from raw.events r
                          where r.event_id = s.event_id and r._dlt_load_id <> s._dlt_load_id
                            and (r.content_sha256, r.segment, r.line_no)
                                > (s.content_sha256, s.segment, s.line_no))
            qualify row_number() over (partition by s.event_id order by {RULE}) = 1"""
        )
        (replaced,) = con.execute("select count(*) from winners").fetchone()
        if replaced:
            _record_replaced(
                con,
                """select r.event_id, r.content_sha256, r.segment, r.line_no, r._dlt_load_id,
                          w.content_sha256, w.segment, w.line_no, w._dlt_load_id
                   from raw.events r join winners w on r.event_id = w.event_id
                   where r._dlt_load_id <> w._dlt_load_id
                     and (r.content_sha256, r.segment, r.line_no)
                         <> (w.content_sha256, w.segment, w.line_no)""",
            )
            con.execute("delete from raw.events where event_id in (select event_id from winners)")
            con.execute("insert into raw.events by name select * from winners")
        con.execute("drop table winners")
    return int(replaced)


@contextmanager
def _transaction(con) -> Iterator[None]:
    con.execute("begin")
    try:
        yield
        con.execute("commit")
    except BaseException:
        # a commit that failed (a lake's transaction conflict) has rolled back already
        with suppress(duckdb.Error):
            con.execute("rollback")
        raise


def _record_replaced(con, rows: str) -> None:
    """Add `rows` (the replaced copy's content_sha256, segment, line_no and load id, then the
    kept copy's) to raw.replaced_copies; made on the first replacement."""
    (count,) = con.execute(f"select count(*) from ({rows})").fetchone()
    if not count:
        return
    con.execute(
        f"""create table if not exists {REPLACED_COPIES} (
            event_id varchar, replaced_content_sha256 varchar, replaced_segment varchar,
            replaced_line_no bigint, replaced_load_id varchar,
            kept_content_sha256 varchar, kept_segment varchar, kept_line_no bigint,
            kept_load_id varchar)"""
    )
    con.execute(f"insert into {REPLACED_COPIES} {rows}")


def copies_replaced(warehouse_db: Path) -> int:
    """How many loaded rows a later-loaded copy replaced (each forces a full refresh once)."""
    if not warehouse_exists(Path(warehouse_db)):
        return 0
    with open_warehouse(Path(warehouse_db), read_only=True) as con:
        if not _exists(con, "raw", "replaced_copies"):
            return 0
        return int(con.execute(f"select count(*) from {REPLACED_COPIES}").fetchone()[0])
