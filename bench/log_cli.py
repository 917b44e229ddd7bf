"""`bench log push`: this data root's sealed segments and MANIFEST into the log bucket
(BENCH_LOG_BUCKET; warehouse/log_bucket.py, docs/team.md)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from bench.options import HomeOption

if TYPE_CHECKING:
    from warehouse.log_bucket import PushResult
    from warehouse.paths import BenchPaths

log_app = typer.Typer(
    help="The log in object storage: push this data root's sealed segments "
    "(BENCH_LOG_BUCKET=s3://bucket/prefix or a shared folder).",
    no_args_is_help=True,
)
out = Console()


def register(app: typer.Typer, paths_for) -> None:
    @log_app.command()
    def push(
        bucket: Annotated[
            str | None,
            typer.Option(
                metavar="URL",
                help="Where to push: s3://bucket/prefix or a folder (default $BENCH_LOG_BUCKET).",
            ),
        ] = None,
        home: HomeOption = None,
    ) -> None:
        """Upload every sealed segment the bucket lacks, then the MANIFEST that seals them,
        under this data root's own prefix (its writer id). Safe to run again at any time: an
        object is uploaded once. A builder's `bench ingest` with the same BENCH_LOG_BUCKET
        loads them (docs/team.md)."""
        from transform.pipeline import push_log

        out.print(pushed_line(push_log(paths_for(home), bucket)))

    app.add_typer(log_app, name="log")


def pushed_line(result: PushResult) -> str:
    return (
        f"writer {result.writer}: uploaded {len(result.uploaded)} sealed segment(s), "
        f"{result.already} already there; MANIFEST of {result.manifest_records} records"
    )


def after_writing(paths: BenchPaths, console: Console, refresh: Callable[[], None] | None) -> None:
    """What every command that appends to the log (a run, a rejudge, an import, a correction)
    does once it has: push the log to the bucket when one is set (first, so the team has the
    events even if the local build fails), then `refresh` (its --score: load, build, publish).
    A failed push fails the command (exit 1) after the rest is done: a job that was to share
    its log did not."""
    pushed = _push_if_bucket(paths, console)
    if refresh is not None:
        refresh()
    if not pushed:
        raise typer.Exit(1)


def _push_if_bucket(paths: BenchPaths, console: Console) -> bool:
    """With BENCH_LOG_BUCKET set, push what is sealed, so a machine that collects for a team
    shares its log without a second command. False when the push failed (said why; the events
    are safe in the local log, and `bench log push` uploads them later); True when pushed or
    when no bucket is set."""
    from warehouse.log_bucket import BUCKET_ENV, LogBucketError  # here: not at `bench -h`

    if not os.environ.get(BUCKET_ENV, "").strip():
        return True
    from transform.pipeline import push_log

    try:
        result = push_log(paths)
    except LogBucketError as exc:
        console.print(
            f"[red]log push failed:[/red] {exc}\nThe events are safe in the local log; "
            "`bench log push` uploads them when the bucket is reachable."
        )
        return False
    console.print(f"log pushed to ${BUCKET_ENV}: {pushed_line(result)}")
    return True
