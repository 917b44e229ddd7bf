"""tests/dbt_qa: the question-answering marts. Helper modules of tests/dbt (dbt_harness,
raw_events_fixture) and of this folder are imported by plain name."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for path in (HERE, HERE.parent / "dbt"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
