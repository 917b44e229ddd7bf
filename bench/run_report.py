"""What a collecting command shows after its run: dbt progress while the marts build, then the
headline figure per lane/system from the published snapshot, and where to look next.

The figures are read from the marts (the same numbers the app shows), never recomputed here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import duckdb
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bench import pipeline
from ingest.pipeline import IngestResult
from warehouse.paths import BenchPaths

# (mart, key column, label, headline columns as (column, header)); a run shows up in each mart
# its family writes to.
HEADLINES = (
    (
        "extraction_leaderboard",
        "system",
        "extraction engine",
        (
            ("seed_composite", "seed composite"),
            ("composite", "composite (active weights)"),
            ("shingle_f1", "shingle F1"),
            ("dataset_name", "dataset"),
        ),
    ),
    (
        "qa_leaderboard",
        "lane",
        "QA lane",
        (
            ("strict_accuracy", "accuracy"),
            ("strict_accuracy_ci_low", "95% CI low"),
            ("strict_accuracy_ci_high", "high"),
            ("f1", "F1"),
            ("grader_id", "grader"),
        ),
    ),
    (
        "draco_leaderboard",
        "lane",
        "research system",
        (
            ("score_mean", "score"),
            ("score_ci_low", "95% CI low"),
            ("score_ci_high", "high"),
            ("pass_rate_mean", "pass rate"),
            ("judge_id", "judge"),
        ),
    ),
)


@contextmanager
def unit_progress(console: Console, description: str) -> Iterator[Callable[[int, int], None]]:
    """The bar a collecting command shows while its run works (units done of total); yields
    the `on_progress(done, total)` every runner takes."""
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        task = bar.add_task(description, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def refresh(paths: BenchPaths, console: Console) -> IngestResult:
    """Ingest, build with a progress bar (node count, current model), publish."""
    with console.status("loading events (dlt)"):
        result = pipeline.ingest(paths)
    with Progress(
        TextColumn("[bold]dbt build"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("parsing the project", total=None)

        def on_node(index: int, total: int, name: str) -> None:
            progress.update(task, completed=index, total=total, description=name)

        pipeline.build(paths, on_progress=on_node)
    with console.status("publishing the snapshot"):
        pipeline.publish(paths)
    console.print(
        f"loaded {result.loaded_events} new events, quarantined {result.quarantined}; "
        f"built and published {paths.serve_db}"
    )
    return result


def _columns(con: duckdb.DuckDBPyConnection, mart: str) -> set[str]:
    rows = con.execute(
        "select column_name from information_schema.columns "
        "where table_schema = 'marts' and table_name = ?",
        [mart],
    ).fetchall()
    return {name for (name,) in rows}


def headline_tables(paths: BenchPaths, run_ids: list[str] | None) -> list[Table]:
    """One table per family the runs appear in (every run when `run_ids` is None): each
    lane/system with its headline figures, best first."""
    if not paths.serve_db.exists() or run_ids == []:
        return []
    tables = []
    with duckdb.connect(str(paths.serve_db), read_only=True) as con:
        for mart, key, label, figures in HEADLINES:
            columns = _columns(con, mart)
            if not columns or key not in columns or "run_id" not in columns:
                continue
            shown = [(c, h) for c, h in figures if c in columns]
            select = ", ".join([f'"{key}"', *(f'"{c}"' for c, _ in shown)])
            order = f'"{shown[0][0]}" desc nulls last' if shown else f'"{key}"'
            # one row per lane even where a mart has one row per (lane, grader/judge)
            where = "" if run_ids is None else "where run_id in (select unnest(?))"
            rows = con.execute(
                f"select distinct {select} from marts.{mart} {where} order by {order}, 1",
                [] if run_ids is None else [run_ids],
            ).fetchall()
            if not rows:
                continue
            table = Table(title=f"{mart.replace('_', ' ')}")
            table.add_column(label)
            for _, header in shown:
                table.add_column(header, justify="right")
            for row in rows:
                table.add_row(str(row[0]), *(_fmt(v) for v in row[1:]))
            tables.append(table)
    return tables


def _fmt(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def print_headlines(paths: BenchPaths, run_ids: list[str] | None, console: Console) -> None:
    for table in headline_tables(paths, run_ids):
        console.print(table)
    console.print(
        "open [bold]bench app[/bold] for leaderboards, charts and per-item lineage "
        '(or query: bench sql "select * from marts.<mart>")'
    )


def refresh_and_report(paths: BenchPaths, console: Console, run_ids: list[str]) -> None:
    refresh(paths, console)
    print_headlines(paths, run_ids, console)
