"""An ingest that dies (os._exit, as under kill -9: no cleanup, no finally) at one boundary of
dlt's work. Run as a script: `python killed_ingest.py HOME BOUNDARY`; it exits with KILLED when
the boundary was reached, 0 when the ingest finished without reaching it.

Each boundary wraps one function of dlt 1.31 (extract, normalize, load, abort), dying before or
after the real one runs, so the directory is left exactly as dlt leaves it there.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

KILLED = 77

# name: (module, class, method, die before or after it runs, where dlt is then)
BOUNDARIES: dict[str, tuple[str, str, str, str, str]] = {
    "extract-uncommitted": (
        "dlt.extract.extract",
        "Extract",
        "commit_packages",
        "before",
        "items written in normalize/<random>/new/<id>, never committed",
    ),
    "extract-committed": (
        "dlt.extract.extract",
        "Extract",
        "commit_packages",
        "after",
        "package in normalize/extracted, local state (offsets) not saved",
    ),
    "extracted": (
        "dlt.pipeline.pipeline",
        "Pipeline",
        "normalize",
        "before",
        "package extracted and state saved, normalize not started",
    ),
    "normalize-writing": (
        "dlt.common.storages.load_storage",
        "LoadStorage",
        "commit_new_load_package",
        "before",
        "normalized files in load/new/<id>, not renamed",
    ),
    "normalize-renamed": (
        "dlt.common.storages.load_storage",
        "LoadStorage",
        "commit_new_load_package",
        "after",
        "one id in load/normalized and normalize/extracted (issue #25's wedge)",
    ),
    "normalized": (
        "dlt.pipeline.pipeline",
        "Pipeline",
        "load",
        "before",
        "package normalized, load not started",
    ),
    "copy-committed": (
        "dlt.destinations.impl.duckdb.duck",
        "DuckDbCopyJob",
        "run",
        "after",
        "staging copy committed, job not marked done",
    ),
    "jobs-done": (
        "dlt.destinations.job_client_impl",
        "SqlJobClientBase",
        "complete_load",
        "before",
        "copy and merge done, load not recorded in _dlt_loads",
    ),
    "load-recorded": (
        "dlt.destinations.job_client_impl",
        "SqlJobClientBase",
        "complete_load",
        "after",
        "load recorded in _dlt_loads, package still in load/normalized",
    ),
    "package-archived": (
        "dlt.common.storages.load_storage",
        "LoadStorage",
        "complete_load_package",
        "after",
        "package moved to load/loaded, the run not finished",
    ),
    "abort-restoring": (
        "dlt.pipeline.pipeline",
        "Pipeline",
        "_restore_from_snapshot",
        "before",
        "recovery's abort recorded, pipeline state not yet rewound",
    ),
}


def die_at(boundary: str) -> None:
    module_name, class_name, method, when, _ = BOUNDARIES[boundary]
    owner = getattr(importlib.import_module(module_name), class_name)
    real = getattr(owner, method)

    def wrapped(*args, **kwargs):
        if when == "before":
            os._exit(KILLED)
        value = real(*args, **kwargs)
        os._exit(KILLED)
        return value

    setattr(owner, method, wrapped)


def main() -> None:
    home, boundary = Path(sys.argv[1]), sys.argv[2]
    from ingest.pipeline import ingest_log
    from warehouse.log import EventLog

    die_at(boundary)
    ingest_log(EventLog(home / "log"), home / "warehouse.duckdb", home / "dlt")


if __name__ == "__main__":
    main()
