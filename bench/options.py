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
ShardOption = Annotated[
    str | None,
    typer.Option(
        metavar="K/N",
        help="Run the K-th of N slices of this run's items, e.g. 1/2 here and 2/2 on another "
        "machine; the run is finished when every shard is (docs/team.md).",
        show_default=False,
    ),
]
