"""The published marts' contract as the per-model yml states it (dbt_project/models/marts/
<family>/<mart>.yml, enforced by dbt on the SQL marts): read it, and compare a warehouse with it.

Imported by plain name, like dbt_harness (tests/dbt is on sys.path, see conftest.py)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import yaml
from dbt_harness import DBT_PROJECT

MARTS_DIR = DBT_PROJECT / "models" / "marts"
Contracts = dict[str, dict[str, str]]


def mart_contracts() -> Contracts:
    """{mart: {column: data_type}}, columns in table order, from models/marts/<family>/<mart>.yml."""
    contracts: Contracts = {}
    for path in sorted(MARTS_DIR.rglob("*.yml")):
        for model in yaml.safe_load(path.read_text()).get("models") or []:
            contracts[model["name"]] = {
                column["name"]: column.get("data_type") for column in model.get("columns") or []
            }
    return contracts


def create_contract_tables(con: duckdb.DuckDBPyConnection, contracts: Contracts) -> None:
    """Empty `marts` tables with exactly the contract's columns and types."""
    con.execute("create schema if not exists marts")
    for mart, columns in contracts.items():
        body = ", ".join(f'"{name}" {data_type}' for name, data_type in columns.items())
        con.execute(f"create table marts.{mart} ({body})")


def table_columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    """{table: [(column, type)]} of schema marts, as DuckDB spells the types."""
    tables: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in con.execute(
        "select table_name, column_name, data_type from information_schema.columns "
        "where table_schema = 'marts' order by table_name, ordinal_position"
    ).fetchall():
        tables.setdefault(table, []).append((column, data_type))
    return tables


def contract_mismatches(warehouse: Path, marts: set[str] | None = None) -> dict[str, object]:
    """Marts of a built warehouse whose (column, type) list is not the contract's, with the
    contract's list. Types are compared as DuckDB resolves the yml's spelling (`text` and
    `varchar` are one type). `marts` limits the check (default: every mart with a contract)."""
    with duckdb.connect() as con:
        create_contract_tables(con, mart_contracts())
        expected = table_columns(con)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        built = table_columns(con)
    return {
        mart: {"built": built.get(mart), "contract": columns}
        for mart, columns in expected.items()
        if (marts is None or mart in marts) and built.get(mart) != columns
    } | {mart: "not in the contract" for mart in set(built) - set(expected)}
