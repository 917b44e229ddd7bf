"""`bench log push`: this data root's sealed segments and MANIFEST into the log bucket
(BENCH_LOG_BUCKET; warehouse/log_bucket.py, docs/team.md)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from bench.options import HomeOption

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

        result = push_log(paths_for(home), bucket)
        out.print(
            f"writer {result.writer}: uploaded {len(result.uploaded)} sealed segment(s), "
            f"{result.already} already there; MANIFEST of {result.manifest_records} records"
        )

    app.add_typer(log_app, name="log")
