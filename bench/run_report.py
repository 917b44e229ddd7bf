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

from ingest.pipeline import IngestResult
from transform import pipeline
from warehouse.metric_scales import METRIC_SCALES, MISSING
from warehouse.paths import BenchPaths

# (mart, key column, label, ranking group, headline columns as (column, header, scale)); a run
# shows up in each mart its family writes to. One table per (mart, group): a ranking never mixes
# two datasets, graders or judge regimes. The first headline column is the ranking the app's
# page defends (for extraction, the composite under the active weights). `scale` names the
# metric's display scale in warehouse.metric_scales (None: shown as stored), so the CLI prints
# the number the app shows.
HEADLINES = (
    (
        "extraction_leaderboard",
        "system",
        "extraction engine",
        ("dataset_name", "dataset"),
        (
            ("composite", "composite (active weights)", "extraction_composite"),
            ("composite_ci_low", "95% CI low", "extraction_composite"),
            ("composite_ci_high", "high", "extraction_composite"),
            ("seed_composite", "seed composite", "extraction_seed_composite"),
            ("shingle_f1", "shingle F1", "shingle_f1"),
        ),
    ),
    (
        "qa_leaderboard",
        "lane",
        "QA lane",
        ("grader_id", "grader"),
        (
            ("strict_accuracy", "accuracy", "qa_strict_accuracy"),
            ("strict_accuracy_ci_low", "95% CI low", "qa_strict_accuracy"),
            ("strict_accuracy_ci_high", "high", "qa_strict_accuracy"),
            ("f1", "F1", "qa_f1"),
        ),
    ),
    (
        "draco_leaderboard",
        "lane",
        "research system",
        ("judge_id", "judge"),
        (
            ("score_mean", "score (points, 0–100)", "draco_score"),
            ("score_ci_low", "95% CI low", "draco_score"),
            ("score_ci_high", "high", "draco_score"),
            ("pass_rate_mean", "pass rate (points)", "draco_pass_rate"),
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
    """One table per family the runs appear in (every run when `run_ids` is None) and per
    dataset / grader / judge regime within it: each lane/system with its headline figures on the
    app's display scale, best first."""
    if not paths.serve_db.exists() or run_ids == []:
        return []
    tables = []
    with duckdb.connect(str(paths.serve_db), read_only=True) as con:
        for mart, key, label, (group, group_label), figures in HEADLINES:
            columns = _columns(con, mart)
            if not columns or key not in columns or "run_id" not in columns:
                continue
            shown = [(c, h, scale) for c, h, scale in figures if c in columns]
            group_sql = f'"{group}"' if group in columns else "null"
            select = ", ".join([group_sql, f'"{key}"', *(f'"{c}"' for c, _, _ in shown)])
            order = f'"{shown[0][0]}" desc nulls last' if shown else f'"{key}"'
            # one row per lane even where a mart has one row per (lane, grader/judge)
            where = "" if run_ids is None else "where run_id in (select unnest(?))"
            rows = con.execute(
                f"select distinct {select} from marts.{mart} {where} "
                f"order by 1 nulls last, {order}, 2",
                [] if run_ids is None else [run_ids],
            ).fetchall()
            groups: dict[object, list[tuple]] = {}
            for row in rows:
                groups.setdefault(row[0], []).append(row[1:])
            for group_value, group_rows in groups.items():
                title = mart.replace("_", " ")
                if group in columns:
                    title += f" · {group_label} {_fmt(group_value, None)}"
                table = Table(title=title)
                table.add_column(label)
                for _, header, _ in shown:
                    table.add_column(header, justify="right")
                for row in group_rows:
                    table.add_row(
                        str(row[0]),
                        *(_fmt(v, scale) for v, (_, _, scale) in zip(row[1:], shown, strict=True)),
                    )
                tables.append(table)
    return tables


def _fmt(value, scale: str | None) -> str:
    if scale is not None:
        return METRIC_SCALES[scale].text(value)
    if value is None:
        return MISSING
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


def after_collecting(
    paths: BenchPaths, console: Console, run_ids: list[str], *, score: bool
) -> None:
    """What every collecting command does once its run has ended: push the log when a bucket is
    set, then with --score load, build, publish and show the runs' headline figures
    (bench/log_cli.after_writing)."""
    from bench.log_cli import after_writing

    after_writing(
        paths, console, (lambda: refresh_and_report(paths, console, run_ids)) if score else None
    )
