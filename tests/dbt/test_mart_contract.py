"""The per-model yml is the one column list of the published marts (issue #10).

dbt enforces it on every SQL mart (`contract: enforced`, cascaded in dbt_project.yml): a build
whose SQL yields other column names or types fails. These tests hold everything else to it: the
Python mart dbt cannot enforce, the queries and column lists of app/data/, and the column lists
of docs/warehouse-contract.md. Only the first needs a dbt build (the session's `built_warehouse`);
the others read the yml.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import itertools
import pkgutil
import re
import shutil
from pathlib import Path

import duckdb
import pytest
from dbt_harness import REPO, run_dbt
from mart_contract import (
    MARTS_DIR,
    Contracts,
    contract_mismatches,
    create_contract_tables,
    mart_contracts,
)

import app.data
from app.data import core, draco, live_extraction, qa, runs
from warehouse.query import read_only_query

CONTRACT_DOC = REPO / "docs" / "warehouse-contract.md"


def test_every_mart_has_a_contract_with_a_type_per_column():
    contracts = mart_contracts()
    models = {path.stem for path in MARTS_DIR.rglob("*") if path.suffix in (".sql", ".py")}
    assert set(contracts) == models
    untyped = [f"{mart}.{c}" for mart, cols in contracts.items() for c, t in cols.items() if not t]
    assert not [mart for mart, columns in contracts.items() if not columns]
    assert not untyped


@pytest.mark.slow
def test_built_marts_have_exactly_the_contract_columns_and_types(built_warehouse):
    """dbt checks the SQL marts itself; the Python one (fct_draco_significance) only here."""
    assert contract_mismatches(built_warehouse.path) == {}


# --- app/data ------------------------------------------------------------------------------

APP_DATA_MODULES = [
    importlib.import_module(f"app.data.{info.name}")
    for info in pkgutil.iter_modules(app.data.__path__)
]
# Arguments for the app's query functions, by annotation: any value binds (the tables are empty).
# Each annotation's values: a function is called once per combination, so a family switch
# (app.data.items.Family) runs every family's SQL.
ARGUMENTS = {
    "str": ["x"],
    "str | None": ["x"],
    "int": [1],
    "Sequence[str]": [["x"]],
    "Family": ["qa", "draco", "extraction", "live"],
}
# Plumbing with no query of its own (family_status runs through qa_status and draco_status;
# the item browser's helpers shape frames item_cells already queried).
NOT_QUERIES = {
    "serve_db_path",
    "snapshot_version",
    "family_status",
    "item_label",
    "lineage_link",
    "item_summary",
    "filter_items",
    "outcome_counts",
    # the compare page's tally and paired test over frames already queried, and its side keys
    "paired_tally",
    "side_key",
    "parse_side",
    # the what-if panels' formulas, run over frames already queried (app/data/formulas.py)
    "extraction_composite",
    "draco_item_scores",
    "draco_lane_means",
    "qa_lane_relevance",
    "qa_lane_costs",
}


def app_column_lists(contracts: Contracts) -> list[str]:
    """`table.column` of every column list in app/data that the contract does not have (and any
    required table it has no contract for)."""
    wanted: list[tuple[str, str]] = [
        (table, column)
        for lists in (qa.QA_COLUMNS, draco.DRACO_COLUMNS)
        for table, columns in lists.items()
        for column in columns
    ]
    wanted += [
        ("live_extraction_leaderboard", column.strip())
        for column in live_extraction.LEADERBOARD_COLUMNS.split(",")
    ]
    wanted += [(table, key) for table, key, *_predicates in runs.FAMILY_GRIDS.values()]
    missing = [f"{t}.{c}" for t, c in wanted if c not in contracts.get(t, {})]
    return missing + [table for table in core.REQUIRED_TABLES if table not in contracts]


def sql_constants() -> dict[str, str]:
    """Every module-level string of app/data that reads a mart: {module.NAME: sql}."""
    found = {}
    for module in APP_DATA_MODULES:
        for node in ast.parse(Path(module.__file__).read_text()).body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
                and "marts." in node.value.value
            ):
                found[f"{module.__name__}.{node.targets[0].id}"] = node.value.value
    return found


def run_every_app_query(contracts: Contracts, home: Path, monkeypatch) -> list[str]:
    """Call every query function of app/data against a snapshot holding exactly the contract's
    (empty) marts; DuckDB's binder raises on any column or table the contract lacks. Returns
    the SQL that ran."""
    with duckdb.connect(str(home / "serve.duckdb")) as con:
        create_contract_tables(con, contracts)
    monkeypatch.setenv("BENCH_HOME", str(home))
    ran: list[str] = []

    def uncached_query(db_path, version, sql, params):  # st.cache_data would span the tests
        ran.append(sql)
        return read_only_query(
            Path(db_path), sql, [list(p) if isinstance(p, tuple) else p for p in params]
        )

    monkeypatch.setattr(core, "_cached_query", uncached_query)
    for module in APP_DATA_MODULES:
        for name, function in vars(module).items():
            if not inspect.isfunction(function) or function.__module__ != module.__name__:
                continue
            if name.startswith("_") or name in NOT_QUERIES:
                continue
            parameters = inspect.signature(function).parameters.values()
            unknown = [p.annotation for p in parameters if p.annotation not in ARGUMENTS]
            assert not unknown, f"{module.__name__}.{name}: add an argument for {unknown}"
            for arguments in itertools.product(*(ARGUMENTS[p.annotation] for p in parameters)):
                function(*arguments)
    return ran


def test_app_column_lists_are_in_the_contract():
    assert app_column_lists(mart_contracts()) == []


def test_every_app_query_binds_against_the_contract(tmp_path, monkeypatch):
    ran = run_every_app_query(mart_contracts(), tmp_path, monkeypatch)
    never_ran = [name for name, sql in sql_constants().items() if sql not in ran]
    assert never_ran == []
    # the status checks compare the column lists with the snapshot: empty, never "mismatch"
    assert core.snapshot_status().state == "empty"
    assert qa.qa_status().state == "empty"
    assert draco.draco_status().state == "empty"


# --- docs/warehouse-contract.md ------------------------------------------------------------


def documented_columns(text: str) -> dict[str, list[str]]:
    """Each "`mart` — one row per …: col, col (note), …" paragraph: {mart: columns in order}."""
    marts = {}
    for name, body in re.findall(r"`(\w+)` — one row per [^:]*:\s*(.*?)(?:\n\n|\Z)", text, re.S):
        body = re.sub(r"\([^()]*\)", "", body).strip().rstrip(".")
        marts[name] = [column.strip() for column in body.split(",")]
    return marts


def doc_disagreements(contracts: Contracts, text: str) -> dict[str, dict[str, list[str]]]:
    """Per documented mart whose list is not the contract's: what differs."""
    out = {}
    for mart, columns in documented_columns(text).items():
        contract = list(contracts.get(mart, {}))
        if columns != contract:
            out[mart] = {
                "only_in_doc": [c for c in columns if c not in contract],
                "only_in_yml": [c for c in contract if c not in columns],
                "order": [] if set(columns) != set(contract) else columns,
            }
    return out


def test_the_contract_doc_lists_every_mart_with_the_yml_columns_in_order():
    contracts = mart_contracts()
    text = CONTRACT_DOC.read_text()
    assert doc_disagreements(contracts, text) == {}
    assert sorted(set(contracts) - set(documented_columns(text))) == []


# --- the checks above do catch a rename ----------------------------------------------------


def test_a_column_renamed_only_in_the_yml_fails_the_app_and_doc_checks(tmp_path, monkeypatch):
    renamed = copy.deepcopy(mart_contracts())
    columns = renamed["qa_leaderboard"]
    renamed["qa_leaderboard"] = {
        ("strict_accuracy_pct" if c == "strict_accuracy" else c): t for c, t in columns.items()
    }
    assert app_column_lists(renamed) == ["qa_leaderboard.strict_accuracy"]
    disagreements = doc_disagreements(renamed, CONTRACT_DOC.read_text())
    assert disagreements["qa_leaderboard"]["only_in_doc"] == ["strict_accuracy"]
    with pytest.raises(duckdb.BinderException, match="strict_accuracy"):
        run_every_app_query(renamed, tmp_path, monkeypatch)


# --- the yml's constraints are checked by DuckDB while dbt writes the mart -------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("planted", "message"),
    [
        ("run_id = null", r"NOT NULL constraint failed: fct_extraction_pages\w*\.run_id"),
        (
            "page_precision = 2",
            r"CHECK constraint failed on table fct_extraction_pages\w* .*page_precision",
        ),
    ],
)
def test_a_row_breaking_a_mart_constraint_stops_the_build_and_keeps_the_mart(
    built_warehouse, tmp_path, planted, message
):
    """The not-null and range rules are contract constraints, not data tests: no query of their
    own, and a bad row never reaches the published table (dbt swaps it in only on success)."""
    path = tmp_path / "warehouse.duckdb"
    shutil.copy(built_warehouse.path, path)
    with duckdb.connect(str(path)) as con:
        before = con.execute("select count(*) from marts.fct_extraction_pages").fetchone()[0]
        con.execute(
            f"update intermediate.int_extraction_pages_scored set {planted} "
            "where rowid = (select min(rowid) from intermediate.int_extraction_pages_scored)"
        )
    with pytest.raises(AssertionError, match=message):
        run_dbt(["run", "--select", "fct_extraction_pages"], path, tmp_path)
    with duckdb.connect(str(path), read_only=True) as con:
        after = con.execute("select count(*) from marts.fct_extraction_pages").fetchone()[0]
    assert before > 0
    assert after == before
