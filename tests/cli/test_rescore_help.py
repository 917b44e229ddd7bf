"""`bench rescore -h` at 80 columns: every option name whole, every extraction weight name listed,
no help text cut with "…" (issue #27, CLI: the options and the weights example were cut)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench.rescore import extraction_weight_names

BENCH = str(Path(sys.executable).with_name("bench"))
OPTIONS = (
    "--weights",
    "--threshold",
    "--draco-penalty-floor",
    "--draco-weights",
    "--umbrela-threshold",
    "--lane-prices",
    "--reset",
    "--reset-var",
    "--home",
)


def test_rescore_help_reads_at_80_columns_and_lists_the_weight_names():
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    proc = subprocess.run(
        [BENCH, "rescore", "-h"], capture_output=True, text=True, env=env, check=True
    )
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    text = " ".join(line.strip("│ ") for line in lines)
    text = text.replace("NAME=W,…", "").replace("LANE=USD,…", "")  # the metavars, not cut text
    words = set(text.replace(",", " ").replace(".", " ").split())
    for option in OPTIONS:
        assert option in words, option
    for name in extraction_weight_names():
        assert name in words, name
    assert "…" not in text
