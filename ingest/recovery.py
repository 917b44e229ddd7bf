"""An ingest killed at any point leaves dlt's work half done; the next one discards it.

dlt keeps a load package on disk from extract to load (`<pipelines_dir>/bench_events/`):

    normalize/<8 random chars>/new/<id>   extract writing (never read again if it dies)
    normalize/extracted/<id>              extracted, carries the state before this extract
    load/new/<id>                         normalize writing (renamed to load/normalized/<id>)
    load/normalized/<id>                  normalized, being loaded
    load/loaded/<id>                      loaded (or aborted)

A `kill -9` can stop it between any two of these. Left alone, dlt's next `run` resumes the
package instead of extracting what is new; worse, a kill between normalize's rename and its
deletion of the extracted copy leaves one id in `normalize/extracted` and `load/normalized`, and
every later normalize fails with `OSError: [Errno 39] Directory not empty`.

Ingest does not resume: everything a package holds is in the log, and `insert-only` merge on
`event_id` makes loading it again a no-op. So before it extracts, ingest removes the temporary
folders dlt never reads again and aborts every pending package with dlt's own
`Pipeline.abort_packages()`, which records the abort and rewinds the pipeline state (the byte
offsets into the log) to before the package; the ingest that follows reads those lines again.
An abort killed between archiving the package and rewinding the state is finished too.
Rows a partial load already merged stay and are not inserted twice; duplicates a resumed load
left within one copy are removed by `dedupe_events` in ingest/copies.py.

One ingest at a time per pipelines directory (a file lock): recovery must never discard the
package of an ingest that is still running.
"""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LOCK_FILE = "ingest.lock"


@contextmanager
def ingest_lock(pipelines_dir: Path) -> Iterator[None]:
    """Hold the directory's ingest lock (waits for an ingest already running). The kernel
    releases it when the process dies, so a killed ingest never leaves it held."""
    pipelines_dir.mkdir(parents=True, exist_ok=True)
    with open(pipelines_dir / LOCK_FILE, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass
class Recovery:
    """What an interrupted ingest had left and this one cleared."""

    aborted_packages: list[str] = field(default_factory=list)
    removed_folders: list[str] = field(default_factory=list)
    rewound_to: str | None = None  # an aborted package whose state rewind had not happened

    @property
    def anything(self) -> bool:
        return bool(self.aborted_packages or self.removed_folders or self.rewound_to)


def recover(pipeline: Any) -> Recovery:
    """Leave `pipeline` with nothing pending and its state at the last committed load. Call it
    holding `ingest_lock`, before extracting."""
    recovery = Recovery()
    working = Path(pipeline.working_dir)
    for folder in _abandoned_folders(working):
        shutil.rmtree(folder, ignore_errors=True)
        recovery.removed_folders.append(str(folder.relative_to(working)))
    if pipeline.has_pending_data:
        recovery.aborted_packages = sorted(
            {*pipeline.list_extracted_load_packages(), *pipeline.list_normalized_load_packages()}
        )
        _abort(pipeline)
    else:
        recovery.rewound_to = _finish_an_interrupted_abort(pipeline)
    if pipeline.has_pending_data:
        raise RuntimeError(
            f"dlt still has pending packages in {working} after aborting them: "
            f"{sorted(pipeline.list_extracted_load_packages())} extracted, "
            f"{sorted(pipeline.list_normalized_load_packages())} normalized"
        )
    return recovery


def _abandoned_folders(working: Path) -> list[Path]:
    """Folders dlt writes a package into before an atomic rename, and never reads again once
    the process that wrote them is gone: extract's `normalize/<random>` and normalize's
    `load/new/<id>` (a new normalize of the same id deletes and rewrites it anyway)."""
    found: list[Path] = []
    normalize = working / "normalize"
    if normalize.is_dir():
        found += [p for p in normalize.iterdir() if p.is_dir() and p.name != "extracted"]
    new = working / "load" / "new"
    if new.is_dir():
        found += [p for p in new.iterdir() if p.is_dir()]
    return sorted(found)


def _finish_an_interrupted_abort(pipeline: Any) -> str | None:
    """dlt's abort archives the package as aborted, then rewinds the local state to before it.
    Killed in between, the state still points past lines that were never loaded, and dlt has
    nothing pending to resume. When the newest package of all is an aborted one, nothing was
    extracted since, so the state must be that package's snapshot: installing it again (dlt's
    `abort_packages` accepts an aborted package for its cleanup) is a no-op when the rewind had
    happened and the rewind itself when it had not."""
    completed = pipeline.list_completed_load_packages()
    if not completed:
        return None
    newest = max(completed, key=float)
    if pipeline.get_load_package_info(newest).state != "aborted":
        return None
    pipeline.abort_packages(load_id=newest)
    return newest


def _abort(pipeline: Any) -> None:
    """dlt's abort of the package being loaded ends by raising that it aborted it (through
    `load()`); that is the outcome wanted here."""
    from dlt.load.exceptions import LoadPackageAborted
    from dlt.pipeline.exceptions import PipelineStepFailed

    try:
        pipeline.abort_packages()
    except PipelineStepFailed as failed:
        if not isinstance(failed.exception, LoadPackageAborted):
            raise
