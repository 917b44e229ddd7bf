"""Marts on a lake against the same marts in a local warehouse file, row for row.

Row for row means: the same tables, the same columns, the same rows and, per row, the same value
in every column, where a double may differ in its last bits. A lake can scan rows in another
order than the local table, so a mean can sum its terms in another order (observed on a lake
with a local catalog file: 3 of 37 demo marts differ in the 16th significant digit, e.g.
0.48412698412698413 / 0.4841269841269842; on PostgreSQL + S3 all 37 were bit-identical).
"""

from __future__ import annotations

import math

import duckdb

RELATIVE_TOLERANCE = 1e-12


def mart_differences(
    con: duckdb.DuckDBPyConnection, lake: str, local: str, marts: list[str] | None = None
) -> dict[str, object]:
    """{mart: what differs} between catalogs `lake` and `local` of `con` (empty: equal)."""
    names = marts or sorted(_marts(con, local))
    differences: dict[str, object] = {}
    if marts is None and set(names) != _marts(con, lake):
        differences["(tables)"] = sorted(set(names) ^ _marts(con, lake))
    for mart in names:
        columns, expected = _rows(con, f"{local}.marts.{mart}")
        lake_columns, got = _rows(con, f"{lake}.marts.{mart}")
        if lake_columns != columns or len(got) != len(expected):
            differences[mart] = (lake_columns, len(got), columns, len(expected))
            continue
        bad = [
            (column, x, y)
            for row_local, row_lake in zip(expected, got, strict=True)
            for column, x, y in zip(columns, row_local, row_lake, strict=True)
            if not same(x, y)
        ]
        if bad:
            differences[mart] = bad[:3]
    return differences


def _marts(con: duckdb.DuckDBPyConnection, catalog: str) -> set[str]:
    rows = con.execute(
        "select table_name from information_schema.tables "
        "where table_catalog = ? and table_schema = 'marts'",
        [catalog],
    ).fetchall()
    return {name for (name,) in rows}


def _rows(con: duckdb.DuckDBPyConnection, relation: str) -> tuple[list[str], list[tuple]]:
    cursor = con.execute(f"select * from {relation}")
    columns = [d[0] for d in cursor.description]
    # ordered by every value, doubles rounded: their last bits may differ (module docstring)
    return columns, sorted(cursor.fetchall(), key=lambda row: repr([_key(v) for v in row]))


def _key(value: object) -> object:
    return round(value, 9) if isinstance(value, float) else value


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(
            a, b, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-15
        )
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b
