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
