"""Export one published mart (read from the serving snapshot only)."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

# duckdb is imported where a mart is read: the CLI imports FORMATS and ExportError at startup.

FORMATS = ("csv", "json", "parquet")


class ExportError(ValueError):
    pass


def list_marts(serve_db: Path) -> list[str]:
    from warehouse.query import list_tables

    if not serve_db.exists():
        raise ExportError(f"{serve_db} does not exist: run `bench demo` or `bench publish` first")
    return list_tables(serve_db, "marts")


def export_mart(serve_db: Path, mart: str, fmt: str, out: Path | None) -> int:
    if fmt not in FORMATS:
        raise ExportError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    marts = list_marts(serve_db)
    # `bench sql` names a mart `marts.x`; the same name works here.
    mart = mart.removeprefix("marts.")
    if mart not in marts:
        raise ExportError(f"unknown mart {mart!r}; published marts: {', '.join(marts)}")
    import duckdb

    with duckdb.connect(str(serve_db), read_only=True) as con:
        # `mart` is checked against the catalogue above, so quoting it is safe.
        table = con.execute(f'select * from marts."{mart}"').to_arrow_table()
    data = encode_table(table, fmt)
    if out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, out)  # never a half-written export
    return table.num_rows


def _flatten_nested(table):
    import json

    import pyarrow as pa

    for index, field in enumerate(table.schema):
        if pa.types.is_nested(field.type):
            values = [
                None if v is None else json.dumps(v, default=str)
                for v in table.column(index).to_pylist()
            ]
            table = table.set_column(index, field.name, pa.array(values, pa.string()))
    return table


def encode_table(table, fmt: str) -> bytes:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        return buffer.getvalue()
    if fmt == "csv":
        # CSV has no lists or structs: nested columns (e.g. lineage event_ids) become JSON text.
        return _flatten_nested(table).to_pandas().to_csv(index=False).encode("utf-8")
    frame = table.to_pandas()
    return frame.to_json(orient="records", lines=True, force_ascii=False, date_format="iso").encode(
        "utf-8"
    )
