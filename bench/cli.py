"""`bench`: run benchmarks, load and score their events, publish and serve the results."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

# Only what the command signatures need is imported here: `bench --version` and every `-h`
# stay fast. pipeline, run_report, dlt, duckdb, dbt, collectors are imported in command bodies
# (tests/cli/test_lazy_imports.py holds this).
from bench import init_cli, log_cli, sql_cli
from bench.corpora import ARTICLE_BENCHMARK, CORPUS_HELP, resolve_corpus
from bench.export import FORMATS, ExportError
from bench.help import MAIN_EPILOG, VersionOption, add_examples
from bench.options import HomeOption, ScoreOption, ShardOption
from bench.settings import (
    APP_ENTRYPOINT,
    STREAMLIT_FLAGS,
    parse_draco_weights,
    shared_data_dir,
)
from collectors.runs.shard import parse_shard
from transform.state import load_scoring_vars, save_scoring_vars
from warehouse.paths import BenchPaths
from warehouse.scoring_vars import extraction_weight_names

app = typer.Typer(
    help=__doc__,
    epilog=MAIN_EPILOG,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
run_app = typer.Typer(
    help="Run a benchmark: collect raw outputs as events, then load, score and publish."
)
import_app = typer.Typer(help="Import third-party outputs as events, scored by the same models.")
app.add_typer(run_app, name="run")
app.add_typer(import_app, name="import")


@app.callback()
def _root(version: VersionOption = False) -> None:
    """`bench`: run benchmarks, load and score their events, publish and serve the results."""


console = Console(stderr=True)
out = Console()


class UserError(Exception):
    """A problem the user can fix; printed without a traceback, exit 2."""


def _paths(home: Path | None) -> BenchPaths:
    return BenchPaths.from_env(home).ensure()


def _after_collecting(paths: BenchPaths, run_ids: list[str], *, score: bool) -> None:
    """Push the log when a bucket is set; with --score load, build (with dbt progress),
    publish, then the runs' headline figures (bench/run_report.py)."""
    from bench import run_report

    run_report.after_collecting(paths, console, run_ids, score=score)


# --- run -------------------------------------------------------------------------------------


@run_app.command("extraction")
def run_extraction_cmd(
    corpus: Annotated[str, typer.Option(help=CORPUS_HELP)] = "article-extraction-benchmark",
    engines: Annotated[
        str | None,
        typer.Option(
            "--systems",
            "--engines",
            help="Comma-separated systems under test, i.e. engines (default: all). "
            "Alias: --engines.",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Only the first N items (whole pipeline, small).")
    ] = None,
    retry_failed: Annotated[
        bool, typer.Option(help="Run failed (item, engine) pairs again as a new attempt.")
    ] = False,
    score: ScoreOption = True,
    urls: Annotated[
        Path | None,
        typer.Option(help="Live-URL benchmark: a url,vertical[,render] CSV or JSONL to fetch."),
    ] = None,
    render: Annotated[str, typer.Option(help="With --urls: auto | fast | full.")] = "auto",
    shard: ShardOption = None,
    home: HomeOption = None,
) -> None:
    """Run extraction engines over a corpus, or with --urls over live URLs (resumable)."""
    from collectors.extraction.engines import ENGINES

    paths = _paths(home)
    if urls is not None:
        from bench import live_extraction_cli

        summary = live_extraction_cli.run_cmd(
            paths, urls, engines, render, limit, parse_shard(shard)
        )
        _print_run_summary(summary)
        _after_collecting(paths, [summary.run_id], score=score)
        return
    corpus_obj = resolve_corpus(corpus, paths)
    names = _engine_names(engines, ENGINES)
    summary = _run_with_progress(
        paths,
        corpus_obj,
        names,
        limit=limit,
        retry_failed=retry_failed,
        shard=parse_shard(shard),
    )
    _print_run_summary(summary)
    _after_collecting(paths, [summary.run_id], score=score)


def _engine_names(spec: str | None, registry: dict) -> list[str]:
    if not spec:
        return sorted(registry)
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise UserError(
            f"--systems: unknown {', '.join(unknown)}; available: {', '.join(sorted(registry))}"
        )
    return names


def _print_run_summary(summary) -> None:
    table = Table(title=f"run {summary.run_id}")
    for column in ("planned", "already done", "completed", "failed", "seconds"):
        table.add_column(column, justify="right")
    table.add_row(
        str(summary.planned),
        str(summary.skipped_existing),
        str(summary.completed),
        str(summary.failed),
        f"{summary.duration_s:.1f}",
    )
    console.print(table)
    if summary.already_finished:
        console.print("[green]this run had already finished; nothing to do[/green]")


def _register_qa() -> None:
    from bench import draco_cli, qa_cli

    plan_app = qa_cli.register(app, run_app, _paths)
    draco_cli.register(app, run_app, plan_app, _paths)
    from bench import live_extraction_cli

    live_extraction_cli.register(plan_app)


_register_qa()
sql_cli.register(app, _paths)
init_cli.register(app)
log_cli.register(app, _paths)


def _register_trust() -> None:
    from bench import trust_cli

    trust_cli.register(app, _paths)


_register_trust()


def _register_scorecard() -> None:
    from bench import scorecard_cli

    scorecard_cli.register(app, _paths)


_register_scorecard()


def _register_imports() -> None:
    from bench import import_cli

    import_cli.register(app, import_app, _paths)


_register_imports()


# --- import ----------------------------------------------------------------------------------


@import_app.command("extraction-predictions")
def import_predictions_cmd(
    file: Annotated[
        Path, typer.Argument(help="Predictions JSON: {id: {articleBody}} or {version, output}.")
    ],
    system: Annotated[str, typer.Option(help="Name of the system that produced the predictions.")],
    version: Annotated[
        str | None, typer.Option(help="Version of that system (default: the file's own `version`).")
    ] = None,
    corpus: Annotated[str, typer.Option(help=CORPUS_HELP)] = "article-extraction-benchmark",
    score: ScoreOption = True,
    home: HomeOption = None,
) -> None:
    """Import another extractor's predictions (upstream predictions format) as events."""
    from collectors.extraction.predictions import import_predictions
    from transform import pipeline

    paths = _paths(home)
    summary = import_predictions(
        pipeline.event_log(paths), file, system, version, resolve_corpus(corpus, paths)
    )
    _print_run_summary(summary)
    _after_collecting(paths, [summary.run_id], score=score)


# --- load, score, publish -----------------------------------------------------------------


@app.command()
def ingest(
    full: Annotated[
        bool, typer.Option(help="Re-read every log line (loads nothing already loaded).")
    ] = False,
    home: HomeOption = None,
) -> None:
    """Load new log lines into the warehouse's raw tables (dlt, insert-only on event_id)."""
    from transform import pipeline
    from warehouse.log_trust import LogVerificationFailed

    paths = _paths(home)
    with console.status("loading events"):
        result = pipeline.ingest(paths, full=full)
    table = Table(title="ingest")
    for column in ("segments read", "lines read", "loaded", "upcast", "quarantined"):
        table.add_column(column, justify="right")
    table.add_row(
        *(
            str(v)
            for v in (
                result.segments_read,
                result.lines_read,
                result.loaded_events,
                result.upcasted,
                result.quarantined,
            )
        )
    )
    console.print(table)
    if result.recovery.anything:
        console.print(
            "recovered an interrupted ingest: discarded "
            f"{len(result.recovery.aborted_packages)} unfinished load package(s) and read "
            "their lines again (nothing is loaded twice)"
        )
    if result.copies_replaced:
        console.print(
            f"{result.copies_replaced} event(s) arrived again from another writer with other "
            "bytes (one fact stated on two machines): each id keeps the copy with the smallest "
            "content_sha256, whatever the order the logs arrive in; the row it replaced is in "
            "raw.replaced_copies, and the next build refreshes every model",
            soft_wrap=True,
        )
    if result.oversized:
        console.print(
            f"[yellow]{result.oversized} event(s) quarantined as oversized[/yellow]: more bytes "
            "than ingest holds at once under BENCH_INGEST_MEMORY_LIMIT; they stay in the log "
            "and load after `BENCH_INGEST_MEMORY_LIMIT=4GB bench ingest --full`",
            soft_wrap=True,
        )
    for sample in result.quarantine_samples[:10]:
        console.print(
            f"[yellow]quarantined[/yellow] {sample['segment']}:{sample['line_no']}: {escape(sample['error'])}"
        )
    for writer in result.writers:
        verdict = "intact" if writer.report.intact else "[red]failed verification[/red]"
        console.print(
            f"bucket writer {writer.writer}: {writer.report.segments} segment(s), "
            f"{writer.report.events} events, {verdict} (copied {writer.fetched} object(s), "
            f"removed {writer.removed})"
        )
    if result.verification is not None and not result.verification.intact:
        raise LogVerificationFailed(result.verification, "loaded only what verifies")
    for writer in result.writers:
        if not writer.report.intact:
            raise LogVerificationFailed(
                writer.report,
                f"writer {writer.writer} in the log bucket: loaded only what verifies",
            )


@app.command()
def build(
    with_unit_tests: Annotated[
        bool, typer.Option(help="Also run every dbt unit test (what `bench test` runs).")
    ] = False,
    home: HomeOption = None,
) -> None:
    """Build the dbt models (staging → intermediate → marts) with the active scoring vars."""
    from transform import pipeline

    paths = _paths(home)
    with console.status("dbt build"):
        built = pipeline.build(paths, with_unit_tests=with_unit_tests)
    if not built:
        console.print("nothing new since the last build (`bench ingest` loads new events)")
    else:
        console.print("dbt build passed" + (" with every unit test" if with_unit_tests else ""))


@app.command("test")
def test_cmd(home: HomeOption = None) -> None:
    """Run every dbt unit test (one per scoring rule) against the built warehouse."""
    from transform.dbt_build import dbt_unit_tests

    paths = _paths(home)
    with console.status("dbt unit tests"):
        output = dbt_unit_tests(paths)
    summary = [line for line in output.splitlines() if "Done." in line or "PASS=" in line]
    console.print(summary[-1].strip() if summary else "dbt unit tests passed")


@app.command()
def publish(home: HomeOption = None) -> None:
    """Copy the marts into a new serving snapshot and swap it into place atomically."""
    from transform import pipeline

    paths = _paths(home)
    tables = pipeline.publish(paths)
    console.print(f"published {len(tables)} tables to {paths.serve_db}")
    out.print(f"log head {pipeline.event_log(paths).head()}")


@app.command()
def pull(home: HomeOption = None) -> None:
    """Copy what was last published on the lake into this data root, for the app and bench sql
    on a machine that does not build (docs/team.md)."""
    from transform import pipeline

    paths = _paths(home)
    snapshot_id, tables = pipeline.pull(paths)
    console.print(f"pulled {len(tables)} tables of lake snapshot {snapshot_id} to {paths.serve_db}")


@app.command()
def rebuild(home: HomeOption = None) -> None:
    """Build a fresh warehouse from the log alone and compare every mart with the current one."""
    from transform import pipeline

    paths = _paths(home)
    with console.status("rebuilding from the log"):
        report = pipeline.rebuild(paths)
    table = Table(title="rebuild from the log")
    table.add_column("mart")
    table.add_column("rows", justify="right")
    table.add_column("same as before")
    for mart, (same, before, after) in report.compared.items():
        table.add_row(
            mart, str(after[0]), "yes" if same else ("new" if before is None else "[red]no[/red]")
        )
    console.print(table)
    console.print(f"loaded {report.ingest.loaded_events} events; published {paths.serve_db}")


@app.command()
def rescore(
    weights: Annotated[
        str | None,
        typer.Option(
            metavar="NAME=W,…",
            help="Extraction composite weights summing to 1 (a name left out weighs 0). "
            f"Names: {', '.join(extraction_weight_names())}.",
        ),
    ] = None,
    threshold: Annotated[
        float | None, typer.Option(min=0, max=1, help="Useful-success completeness threshold.")
    ] = None,
    draco_penalty_floor: Annotated[
        float | None,
        typer.Option(max=-0.0001, help="Cap every DRACO penalty at this weight (e.g. -100)."),
    ] = None,
    draco_weights: Annotated[
        Path | None,
        typer.Option(
            help="CSV of DRACO criterion weight overrides, columns item_id, criterion_id, "
            "weight and optionally reason."
        ),
    ] = None,
    umbrela_threshold: Annotated[
        float | None,
        typer.Option(min=0, max=3, help="QA: a chunk is relevant at this UMBRELA grade or above."),
    ] = None,
    lane_prices: Annotated[
        str | None,
        typer.Option(
            metavar="LANE=USD,…",
            help="QA: $ per 1,000 queries per lane, e.g. brave_search=4.5 (others kept); "
            "a lane must be a known QA lane or one the warehouse holds.",
        ),
    ] = None,
    reset: Annotated[
        bool, typer.Option("--reset", help="Every var back to its default (see --reset-var).")
    ] = False,
    reset_var: Annotated[
        list[str] | None,
        typer.Option(
            "--reset-var",
            metavar="VAR",
            help="Put one var back to its default, keeping the others (repeatable), "
            "e.g. --reset-var draco_penalty_floor.",
        ),
    ] = None,
    home: HomeOption = None,
) -> None:
    """Recompute every score under new weights/thresholds from stored events (no engine, no API)."""
    from bench import rescore as rescoring
    from transform import pipeline

    paths = _paths(home)
    active = load_scoring_vars(paths)
    scoring = {} if reset else dict(active)
    for name in reset_var or []:
        if name not in rescoring.dbt_var_defaults():
            raise ValueError(
                f"--reset-var: unknown scoring var {name!r}; the vars are "
                f"{', '.join(rescoring.dbt_var_defaults())} (dbt_project.yml)"
            )
        scoring.pop(name, None)
    if weights:
        scoring["extraction_weights"] = rescoring.parse_weights(weights)  # replaces the set
    if threshold is not None:
        scoring["useful_success_threshold"] = threshold
    if draco_penalty_floor is not None:
        scoring["draco_penalty_floor"] = draco_penalty_floor
    if umbrela_threshold is not None:
        scoring["umbrela_threshold"] = umbrela_threshold
    if lane_prices:
        prices = {**(scoring.get("lane_price_overrides") or {})}
        requested = rescoring.parse_lane_prices(lane_prices)
        rescoring.check_lane_prices(requested, paths.warehouse_db)
        scoring["lane_price_overrides"] = {**prices, **requested}
    if draco_weights is not None:
        rows = parse_draco_weights(draco_weights)
        scoring["draco_weight_override_rows"] = rows
    changed = rescoring.changed_vars(active, scoring)
    if not changed:  # the warehouse already holds these scores: no dbt, no publish
        if scoring != active:  # e.g. a var spelled out at its default: same scores, kept as given
            save_scoring_vars(paths, scoring)
        console.print(
            "nothing changed: the requested scoring vars are the ones in effect "
            f"({rescoring.describe_vars(scoring)}); no rebuild",
            highlight=False,
        )
        if pipeline.publish_pending(paths):  # an earlier rescore built them, then was stopped
            console.print(f"published the last build, which was never published: {paths.serve_db}")
        return
    if not pipeline.has_events(paths):  # a fresh home: nothing to score yet
        save_scoring_vars(paths, scoring)
        console.print(
            f"saved {scoring or 'the default scoring vars'}; the warehouse has no events yet, "
            "so every later build (bench run …, bench demo) scores with them"
        )
        return
    if draco_weights is not None:
        rescoring.check_draco_overrides(scoring["draco_weight_override_rows"], paths.warehouse_db)
    from transform.dbt_build import rescore_selection

    before = rescoring.leaderboard_scores(paths.warehouse_db)
    with console.status(f"dbt build of what {', '.join(changed)} feeds"):
        selection = rescore_selection(paths, changed)
        pipeline.build(paths, scoring_vars=scoring, select=selection)
        save_scoring_vars(paths, scoring)  # only once a build has accepted them
        pipeline.publish(paths)
    after = rescoring.leaderboard_scores(paths.warehouse_db)
    for table in rescoring.before_after_tables(before, after):
        out.print(table)
    summary = ", ".join(f"{name}={scoring.get(name, 'default')}" for name in changed)
    console.print(f"rescored ({summary}); published {paths.serve_db}", highlight=False)


# --- inspect ---------------------------------------------------------------------------------


@app.command()
def status(home: HomeOption = None) -> None:
    """What is in the log, the warehouse and the serving snapshot."""
    from bench.status import status_rows

    paths = _paths(home)
    table = Table(title=f"bench home {paths.home}")
    table.add_column("what")
    table.add_column("value")
    for key, value in status_rows(paths):
        table.add_row(key, value)
    out.print(table)


@app.command()
def export(
    mart: Annotated[str | None, typer.Argument(help="Published mart to export.")] = None,
    fmt: Annotated[str, typer.Option("--format", help=f"One of {', '.join(FORMATS)}.")] = "csv",
    out_file: Annotated[
        Path | None, typer.Option("--out", help="Output file (default: stdout).")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the published marts.")] = False,
    home: HomeOption = None,
) -> None:
    """Export a published mart as CSV, JSON lines or Parquet."""
    from bench.export import export_mart, list_marts

    paths = _paths(home)
    if list_:
        for name in list_marts(paths.serve_db):
            out.print(name)
        return
    if mart is None:
        raise UserError("give a MART (see `bench export --list`)")
    rows = export_mart(paths.serve_db, mart, fmt, out_file)
    if out_file:
        console.print(f"wrote {rows} rows to {out_file}")


@app.command()
def report(
    out_dir: Annotated[Path, typer.Option("--out", help="Directory to write the site into.")],
    force: Annotated[
        bool, typer.Option("--force", help="Write into a non-empty directory.")
    ] = False,
    home: HomeOption = None,
) -> None:
    """A static site of the published snapshot: scorecard, leaderboards with CIs, a CSV behind
    every figure, the methodology and the log head; open it from disk or any static host."""
    from bench.report import ReportError, write_report

    try:
        written = write_report(_paths(home).serve_db, out_dir, force=force)
    except ReportError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc
    out.print(
        f"wrote {written.index} and {len(written.csvs)} CSV file(s) under {written.out_dir}/data "
        f"(snapshot published {written.published_at}, log head {written.log_head or 'none'})",
        highlight=False,
        soft_wrap=True,
    )
    out.print(f"open it: {written.index.as_uri()} (no server needed)", highlight=False)


# --- serve -----------------------------------------------------------------------------------


@app.command("app")
def app_cmd(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8501,
    home: HomeOption = None,
) -> None:
    """Serve the Streamlit app on 127.0.0.1 over the published snapshot."""
    paths = _paths(home)
    _check_port_free(port)
    env = {**os.environ, "BENCH_HOME": str(paths.home)}
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP_ENTRYPOINT),
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        *STREAMLIT_FLAGS,
    ]
    out.print(f"app: http://127.0.0.1:{port}  (Ctrl-C to stop)")
    sys.stdout.flush()
    # Become the server (exec): signals sent to `bench app` reach streamlit, nothing is orphaned.
    os.execve(command[0], command, env)


def _check_port_free(port: int) -> None:
    """Fail before printing a URL that would not answer (streamlit would only fail later)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            raise UserError(
                f"port {port} on 127.0.0.1 is already in use (another `bench app`?); "
                f"choose another with --port, e.g. --port {port + 1}"
            ) from None


@app.command()
def demo(
    serve: Annotated[bool, typer.Option(help="Start the app when done.")] = True,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8501,
    reference: Annotated[
        bool,
        typer.Option(
            help="Also run the 3 reference engines on the real benchmark when it is on disk."
        ),
    ] = True,
    home: HomeOption = None,
) -> None:
    """The whole job offline: build the demo corpus, run every local engine, score, publish, serve."""
    from bench import run_report
    from collectors.extraction.engines import ENGINES, REFERENCE_ENGINES

    paths = _paths(home)
    if serve:
        _check_port_free(port)  # before minutes of work, not after
    jobs = [("demo", sorted(ENGINES))]
    if reference and (shared_data_dir() / ARTICLE_BENCHMARK).exists():
        jobs.append((ARTICLE_BENCHMARK, sorted(REFERENCE_ENGINES)))
    ran = []
    for corpus_name, engine_names in jobs:
        corpus_obj = resolve_corpus(corpus_name, paths)
        summary = _run_with_progress(paths, corpus_obj, engine_names)
        ran.append(
            f"{len(engine_names)} engines on {corpus_obj.dataset.item_count} pages of {corpus_obj.dataset.name}"
        )
        _print_run_summary(summary)
    from bench import qa_cli

    ran.append(qa_cli.run_demo(paths))
    ran.append(qa_cli.run_demo_series(paths))
    from collectors.qa.lanes import DEMO_PRICE_PER_1K_USD

    ran.append(
        "demo prices (made up, not a vendor's; basis 'demo price' in the price seeds): QA "
        + ", ".join(f"{lane} ${usd:g}/1k" for lane, usd in DEMO_PRICE_PER_1K_USD.items())
        + ", research systems per task from the research_prices seed"
    )
    from bench import draco_cli

    ran.append(draco_cli.run_demo(paths))
    ran.append(draco_cli.import_demo_results(paths))
    from bench import live_extraction_cli

    ran.append(live_extraction_cli.run_demo(paths))
    run_report.refresh(paths, console)
    run_report.print_headlines(paths, None, console)
    out.print("ran " + "; ".join(ran) + f"\ndata root {paths.home}")
    if serve:
        app_cmd(port=port, home=paths.home)


def _run_with_progress(paths: BenchPaths, corpus_obj, engine_names: list[str], **options):
    from bench import run_report
    from collectors.extraction.runner import run_extraction
    from transform import pipeline

    with run_report.unit_progress(
        console, f"extraction on {corpus_obj.dataset.name}"
    ) as on_progress:
        return run_extraction(
            pipeline.event_log(paths),
            corpus_obj,
            engine_names,
            argv=sys.argv[1:],
            on_progress=on_progress,
            **options,
        )


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors a user can act on: printed as one line, exit 2, never a traceback.

    Imported only once something has failed: these modules are the slow part of startup."""
    from collectors.draco.judge import JudgePreflightError
    from collectors.draco.runner import DracoPreflightFailed, DracoRunAborted
    from collectors.extraction.engines import EngineUnavailable
    from collectors.http.keys import MissingApiKey
    from collectors.llm.base import LlmCallError
    from collectors.qa.runner import QaRunAborted
    from transform.dbt_runner import DbtError
    from warehouse.lake import LakeError
    from warehouse.log import RunLocked
    from warehouse.log_trust import LogVerificationFailed

    return (
        UserError,
        LakeError,
        ExportError,
        ValueError,
        FileNotFoundError,
        FileExistsError,
        DbtError,
        EngineUnavailable,
        MissingApiKey,
        LlmCallError,
        QaRunAborted,
        DracoRunAborted,
        JudgePreflightError,
        DracoPreflightFailed,
        RunLocked,
        LogVerificationFailed,
    )


def cli_command():
    """The click command `main` runs: every registered command, with its examples attached."""
    return add_examples(typer.main.get_command(app))


def main() -> None:
    from warehouse.scrub import scrub_console

    scrub_console()  # nothing this process prints can show a configured secret
    from bench.errors import DataFileCorrupt, corrupt_database, explain

    try:
        cli_command()(prog_name="bench")
    except Exception as exc:
        if not isinstance(exc, _user_errors()):
            message = explain(exc)
            if message is None:
                raise
            console.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
            sys.exit(2)
        # A corrupt DuckDB file can surface inside a user error too (dbt's output in a
        # DbtError): then the file and what replaces it is the message.
        explained = isinstance(exc, DataFileCorrupt)
        message = (None if explained else corrupt_database(exc)) or str(exc)
        console.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
        from bench.hints import offline_hint

        hint = offline_hint(exc, sys.argv[1:])
        if hint:
            console.print(f"[yellow]hint:[/yellow] {escape(hint)}", highlight=False, soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
