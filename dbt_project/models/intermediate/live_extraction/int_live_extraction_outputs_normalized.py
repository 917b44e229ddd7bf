"""The live grid's outputs through the one fixed text normaliser (NFKC, whitespace runs -> one
space, stripped, case kept; DuckDB has no NFKC): bench_text's, as in
int_extraction_outputs_normalized. Grain: (run_id, item_id, system)."""

import pyarrow as pa
from bench_text import NORMALIZER_VERSION, normalize

SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("item_id", pa.string()),
        ("system", pa.string()),
        ("normalizer_version", pa.string()),
        ("normalized_output", pa.string()),
        ("normalized_output_chars", pa.int64()),
    ]
)


def model(dbt, session):
    dbt.config(materialized="table")
    rows = (
        dbt.ref("int_live_extraction_grid")
        .project("run_id, item_id, system, output_text")
        .order("run_id, item_id, system")
        .to_arrow_table()
        .to_pylist()
    )
    columns = {field.name: [] for field in SCHEMA}
    for row in rows:
        output = normalize(row["output_text"])
        for name, value in (
            ("run_id", row["run_id"]),
            ("item_id", row["item_id"]),
            ("system", row["system"]),
            ("normalizer_version", NORMALIZER_VERSION),
            ("normalized_output", output),
            ("normalized_output_chars", len(output)),
        ):
            columns[name].append(value)
    return pa.table(columns, schema=SCHEMA)
