"""Options shared by every command module."""

from pathlib import Path
from typing import Annotated

import typer

HomeOption = Annotated[
    Path | None,
    typer.Option(
        "--home", help="Data root (default: $BENCH_HOME or ./.bench).", show_default=False
    ),
]
ScoreOption = Annotated[bool, typer.Option(help="Ingest, build and publish afterwards.")]
PlanJsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable plan.")]
SeriesOption = Annotated[str | None, typer.Option(help="Repeat-run series name.")]
