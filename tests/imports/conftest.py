"""tests/imports: other harnesses' results imported as events. dbt helpers of tests/dbt are
imported by plain name."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for path in (HERE, HERE.parent / "dbt"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
