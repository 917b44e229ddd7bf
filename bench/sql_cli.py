"""`bench sql`: read-only SQL on the serving snapshot, as a table, CSV or JSON lines.

No separate client to find: the snapshot is opened read-only, with external file access off and
the configuration locked, so a query can read the published marts and nothing else, and cannot
write anywhere (no COPY TO, no ATTACH, no INSTALL).
"""

from __future__ import annotations

import contextlib
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from bench.errors import DataFileCorrupt, corrupt_database
from bench.export import ExportError, encode_table
from bench.options import HomeOption

if TYPE_CHECKING:  # duckdb is imported when a query runs, not when `bench -h` starts
    import duckdb

OUTPUT_FORMATS = ("table", "csv", "json")
TABLE_ROW_LIMIT = 200  # the terminal table only; csv/json print every row
DISPLAY_DECIMALS = 4  # the terminal table only; csv/json carry every digit

PROMPT_HELP = """\
.tables   list the published marts
.help     this help
.quit     leave (also .exit, an empty line or Ctrl-D)
Anything else is SQL, run read-only; several statements separated by ; each show a result."""


def open_snapshot(serve_db: Path) -> duckdb.DuckDBPyConnection:
    import duckdb

    from warehouse.publish import parts_dir

    if not serve_db.exists():
        raise ExportError(
            f"{serve_db} does not exist: run `bench demo --no-serve` or `bench publish` first"
        )
    con = duckdb.connect(str(serve_db), read_only=True)
    # No file access from a query, except the snapshot's own Parquet parts (the large marts
    # are views over them; warehouse/publish.py).
    con.execute("set allowed_directories = ?", [[f"{parts_dir(serve_db)}/"]])
    con.execute("set enable_external_access = false")
    con.execute("set lock_configuration = true")
    return con


def run_query(con: duckdb.DuckDBPyConnection, query: str):
    """The query's result as an Arrow table (the last statement's, if several); DuckDB's own
    message on a bad query."""
    import duckdb

    try:
        return con.execute(query).to_arrow_table()
    except duckdb.Error as exc:
        raise ExportError(f"query failed: {exc}") from None


def run_statements(con: duckdb.DuckDBPyConnection, text: str) -> list:
    """One Arrow table per statement in `text`, in order (DuckDB alone returns only the last).

    Every statement runs before anything is shown, so a failing one shows no partial output."""
    import duckdb

    try:
        statements = con.extract_statements(text)
    except duckdb.Error as exc:
        raise ExportError(f"query failed: {exc}") from None
    if not statements:
        raise ExportError("no SQL statement given")
    results = []
    for number, statement in enumerate(statements, 1):
        try:
            results.append(con.execute(statement).to_arrow_table())
        except duckdb.Error as exc:
            where = f"statement {number} of {len(statements)}: " if len(statements) > 1 else ""
            raise ExportError(f"query failed: {where}{exc}") from None
    return results


def display_value(value) -> str:
    """A cell as the terminal table shows it: floats to DISPLAY_DECIMALS places (tiny ones to 3
    significant digits, so a p-value of 2e-07 does not read as 0), NULL as empty."""
    if value is None:
        return ""
    if isinstance(value, float) and math.isfinite(value):
        if value != 0 and abs(value) < 10**-DISPLAY_DECIMALS:
            return f"{value:.3g}"
        return repr(round(value, DISPLAY_DECIMALS))
    return str(value)


def render(table, fmt: str, console: Console) -> None:
    if fmt == "table":
        view = Table(show_lines=False)
        for name in table.column_names:
            view.add_column(name)
        for row in table.slice(0, TABLE_ROW_LIMIT).to_pylist():
            view.add_row(*(display_value(v) for v in row.values()))
        console.print(view)
        more = table.num_rows - TABLE_ROW_LIMIT
        note = f" (first {TABLE_ROW_LIMIT} shown; --format csv for all)" if more > 0 else ""
        console.print(f"{table.num_rows} row(s){note}", style="dim")
        return
    sys.stdout.buffer.write(encode_table(table, fmt))
    sys.stdout.buffer.flush()


def render_all(tables: list, fmt: str, console: Console) -> None:
    """Each statement's result in turn; CSV results are separated by an empty line."""
    for index, table in enumerate(tables):
        if index and fmt == "csv":
            sys.stdout.write("\n")
            sys.stdout.flush()
        render(table, fmt, console)


def list_relations(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute(
        "select table_schema || '.' || table_name from information_schema.tables "
        "where table_schema = 'marts' order by 1"
    ).fetchall()
    return [name for (name,) in rows]


def interactive(con: duckdb.DuckDBPyConnection, fmt: str, console: Console) -> None:
    with contextlib.suppress(ImportError):  # not on every platform
        import readline  # noqa: F401  (line editing and history for input())
    console.print(
        "read-only SQL on the serving snapshot; .help for the commands, .quit to leave.",
        style="dim",
        highlight=False,
    )
    while True:
        try:
            line = input("sql> ").strip()
        except EOFError:
            break
        if not line or line in (".quit", ".exit", ".q"):
            break
        if line == ".help":
            console.print(PROMPT_HELP, highlight=False, markup=False)
            continue
        if line == ".tables":
            for name in list_relations(con):
                console.print(name, highlight=False)
            continue
        if line.startswith("."):
            console.print(
                f"[red]error:[/red] unknown command {line.split()[0]}; .help lists them",
                highlight=False,
            )
            continue
        try:
            render_all(run_statements(con, line), fmt, console)
        except ExportError as exc:
            console.print(f"[red]error:[/red] {exc}", highlight=False)


def register(app: typer.Typer, paths_for) -> None:
    @app.command("sql")
    def sql_cmd(
        query: Annotated[
            str | None,
            typer.Argument(
                help="SQL; several statements separated by ; each show their result. "
                "Omit it for an interactive prompt (.help inside)."
            ),
        ] = None,
        fmt: Annotated[
            str,
            typer.Option("--format", "-f", metavar="table|csv|json", help="Output format."),
        ] = "table",
        home: HomeOption = None,
    ) -> None:
        """Query the published marts (read-only) without installing a database client."""
        if fmt not in OUTPUT_FORMATS:
            raise ExportError(f"--format {fmt!r}: expected one of {', '.join(OUTPUT_FORMATS)}")
        paths = paths_for(home)
        console = Console()
        try:
            with open_snapshot(paths.serve_db) as con:
                if query is None:
                    interactive(con, fmt, console)
                else:
                    render_all(run_statements(con, query), fmt, console)
        except ExportError as exc:
            # DuckDB's checksum error names no file: this command read only the snapshot
            corrupt = corrupt_database(exc, paths.serve_db)
            if corrupt is None:
                raise
            raise DataFileCorrupt(corrupt) from None
