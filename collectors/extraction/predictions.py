"""Import another system's predictions in the upstream article-extraction-benchmark format.

A predictions file maps item id -> {"articleBody": str | null}, either at the top level
(upstream's legacy layout) or wrapped as {"version": "...", "output": {<id>: {...}}}.

Validation happens in full before the first append, so a bad file writes nothing:
- an id that is not in the corpus, a non-object entry, a missing `articleBody` or one that is
  neither a string nor null -> `PredictionsError` naming the file and the id/field;
- a corpus item with no entry -> `extraction_failed` with error_class "missing_prediction"
  (a miss that scores 0, never silently dropped);
- `articleBody: null` -> `extraction_completed` with output_text null and output_bytes 0.

The run id derives from the dataset, the file's sha256 and the system name+version, so
importing the same file again is a no-op reported as "already finished".
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from collectors.extraction.anchors import ANCHOR_RULE_VERSION
from collectors.extraction.corpus import Corpus
from collectors.extraction.run_state import (
    RunSummary,
    item_registered,
    read_run_state,
)
from collectors.runs.one_shot import closed_run_events
from warehouse import bounded_json
from warehouse.canonical import canonical_sha256, sha256_hex
from warehouse.events import (
    ExtractionCompleted,
    ExtractionFailed,
    Payload,
    RunStarted,
    SystemRef,
)
from warehouse.ids import run_id_for
from warehouse.log import EventLog

MISSING_PREDICTION = "missing_prediction"
# A predictions file for the published benchmark (181 pages) is a few MB. A file far larger
# would make events no later ingest or rebuild could hold in memory: refused before reading.
MAX_PREDICTIONS_BYTES = 64 * 1024 * 1024


class PredictionsError(ValueError):
    """The predictions file is unusable; the message names the file and the id/field."""


def parse_predictions(
    path: Path, corpus: Corpus
) -> tuple[bytes, str | None, dict[str, str | None]]:
    """(file bytes, version declared in the file, item id -> articleBody), fully validated."""
    path = Path(path)
    limit = int(os.environ.get("BENCH_MAX_IMPORT_BYTES", MAX_PREDICTIONS_BYTES))
    try:
        size = path.stat().st_size
        if size > limit:
            raise PredictionsError(
                f"{path}: {size:,} bytes, over the import limit of {limit:,} "
                "(BENCH_MAX_IMPORT_BYTES raises it); a predictions file for the benchmark is a "
                "few MB"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise PredictionsError(f"{path}: not found") from None
    try:
        document = bounded_json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PredictionsError(f"{path}: not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise PredictionsError(
            f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    if not isinstance(document, dict):
        raise PredictionsError(
            f'{path}: expected a JSON object of item id -> {{"articleBody": ...}}, '
            f"got {type(document).__name__}"
        )

    known = set(corpus.item_ids)
    declared_version: str | None = None
    mapping: Any = document
    if "output" in document and "output" not in known:
        unexpected = sorted(set(document) - {"version", "output"})
        if unexpected:
            raise PredictionsError(
                f"{path}: unexpected top-level field(s) {unexpected} next to 'output' "
                '(wrapped layout: {"version": ..., "output": ...})'
            )
        mapping = document["output"]
        declared_version = document.get("version")
        if declared_version is not None and not isinstance(declared_version, str):
            raise PredictionsError(f"{path}: field 'version' must be a string")
        if not isinstance(mapping, dict):
            raise PredictionsError(
                f"{path}: field 'output' must be an object of item id -> {{\"articleBody\": ...}}"
            )

    if not mapping:
        raise PredictionsError(f"{path}: has no predictions")
    bodies: dict[str, str | None] = {}
    for item_id, entry in mapping.items():
        where = f"{path}: item {item_id!r}"
        if item_id not in known:
            raise PredictionsError(
                f"{where}: not an item of corpus {corpus.dataset.name} "
                f"(sha256 {corpus.dataset.sha256[:12]}…)"
            )
        if not isinstance(entry, dict):
            raise PredictionsError(f"{where}: expected an object, got {type(entry).__name__}")
        if "articleBody" not in entry:
            raise PredictionsError(f"{where}: field 'articleBody' is missing")
        body = entry["articleBody"]
        if body is not None and not isinstance(body, str):
            raise PredictionsError(
                f"{where}: field 'articleBody' must be a string or null, got {type(body).__name__}"
            )
        bodies[item_id] = body
    return data, declared_version, bodies


def import_predictions(
    log: EventLog,
    file: Path,
    system: str,
    version: str | None,
    corpus: Corpus,
    *,
    argv: list[str] | tuple[str, ...] = (),
) -> RunSummary:
    """Record a predictions file as one run of `system`. `version` defaults to the version
    the file declares (wrapped layout); one of the two is required."""
    clock = time.monotonic()
    file = Path(file)
    data, declared_version, bodies = parse_predictions(file, corpus)
    if not system:
        raise PredictionsError(f"{file}: a system name is required")
    version = version or declared_version
    if not version:
        raise PredictionsError(
            f"{file}: no system version given and the file declares none "
            '(wrapped layout: {"version": ..., "output": ...})'
        )
    file_sha256 = sha256_hex(data)
    settings: dict[str, Any] = {"file": file.name, "file_sha256": file_sha256}
    if declared_version is not None:
        settings["file_version"] = declared_version
    system_ref = SystemRef(name=system, version=version, settings=settings)
    spec = {
        "benchmark": "extraction",
        "source": "import",
        "dataset_sha256": corpus.dataset.sha256,
        "item_ids": list(corpus.item_ids),
        "systems": [system_ref.model_dump(mode="json")],
        "file_sha256": file_sha256,
        "anchor_rule_version": ANCHOR_RULE_VERSION,
    }
    spec_sha256 = canonical_sha256(spec)
    run_id = run_id_for(spec_sha256)

    def summary(completed: int, failed: int, already: bool) -> RunSummary:
        return RunSummary(
            run_id=run_id,
            spec_sha256=spec_sha256,
            planned=len(corpus.items),
            skipped_existing=len(corpus.items) if already else 0,
            completed=completed,
            failed=failed,
            already_finished=already,
            duration_s=round(time.monotonic() - clock, 3),
        )

    if read_run_state(log, run_id).finished_at_counts:
        return summary(0, 0, already=True)

    payloads: list[Payload] = [
        RunStarted(
            benchmark="extraction",
            source="import",
            spec=spec,
            spec_sha256=spec_sha256,
            dataset=corpus.dataset,
            systems=[system_ref],
            argv=list(argv),
        )
    ]
    completed = failed = 0
    for item in corpus.items:
        payloads.append(item_registered(item, corpus.dataset.sha256))
        common = {
            "item_id": item.item_id,
            "system": system,
            "system_version": version,
            "settings": settings,
            "attempt": 1,
        }
        if item.item_id in bodies:
            body = bodies[item.item_id]
            payloads.append(
                ExtractionCompleted(
                    **common,
                    source="import",
                    render_path=None,
                    input_sha256=None,  # we do not know what the system was fed
                    output_text=body,
                    output_bytes=len(body.encode("utf-8")) if body is not None else 0,
                    latency_ms=None,
                )
            )
            completed += 1
        else:
            payloads.append(
                ExtractionFailed(
                    **common,
                    error_class=MISSING_PREDICTION,
                    error_message=f"{file.name} has no prediction for this item",
                )
            )
            failed += 1
    events = closed_run_events(
        payloads, run_id=run_id, spec=spec, completed=completed, failed=failed, started=clock
    )
    with log.writer() as writer:
        writer.append(events)
    return summary(completed, failed, already=False)
