"""Create a DuckDB file with raw.events for developing the dbt project.

.venv/bin/python tests/dbt/make_dev_warehouse.py /tmp/dbtdev/w.duckdb [--no-real]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from extraction_cases import edge_case_runs, real_data_run
from raw_events_fixture import Clock, insert_events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--no-real", action="store_true", help="only the hand-made edge cases")
    args = parser.parse_args()
    args.path.parent.mkdir(parents=True, exist_ok=True)
    args.path.unlink(missing_ok=True)
    clock = Clock()
    events = edge_case_runs(clock)
    if not args.no_real:
        events += real_data_run(clock).events
    insert_events(args.path, events)
    print(f"{args.path}: {len(events)} events")


if __name__ == "__main__":
    main()
