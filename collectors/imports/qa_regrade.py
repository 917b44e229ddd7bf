"""Re-synthesise and re-grade an imported QA run with our roles (`bench import regrade-qa`).

An imported file records what its lane retrieved for each question (`collectors.imports.
qa_results` stores it as that lane's search call) and the answer and grade its harness made of
it. Here the stored retrieval is replayed as a QA lane, `ImportedRetrievalLane`, whose search
step calls nothing: it hands back the imported call for the question. The ordinary QA runner
then normalises the chunks, synthesises an answer with our synthesizer, grades it with our
grader and scores the URLs, in a run of its own (the lane's SystemRef names the import run,
file and sha256), so the file's own regime and ours sit side by side and never share a row.

A row the file records as failed has no retrieval to replay: it comes back as a failed search
(error_class "imported_failure", the file's error message), so the two runs count the same
questions and the same failures. Resuming is the runner's: running the command again finishes
what is left and adds nothing twice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from collectors.imports.qa_results import IMPORTED_PROVIDER
from collectors.imports.source_file import ImportFormatError
from collectors.qa.dataset import QaDataset
from collectors.qa.roles import Grader, RelevanceJudge, Synthesizer
from collectors.qa.runner import QaRunSummary, run_qa
from warehouse.events import (
    CallTimings,
    Chunk,
    ProviderCallCompleted,
    ProviderCallFailed,
    RecordedRequest,
    SystemRef,
)
from warehouse.log import EventLog

REPLAY_NORMALIZER = "imported-replay@1"
FAILED_IMPORT = "imported_failure"


@dataclass(frozen=True)
class ImportedQaRun:
    """What the log holds of one `bench import qa-results` run."""

    run_id: str
    lane: str
    dataset_sha256: str
    file_name: str
    file_sha256: str
    item_ids: tuple[str, ...]  # the questions the file's rows joined, in import order
    calls: dict[str, ProviderCallCompleted]  # item_id -> the retrieval the file recorded
    errors: dict[str, str | None]  # item_id -> the file's error, for rows it records as failed


def read_imported_qa_run(log: EventLog, run_id: str) -> ImportedQaRun:
    """The import run `run_id`; ImportFormatError naming the run when it is not one."""
    started = None
    item_ids: list[str] = []
    calls: dict[str, ProviderCallCompleted] = {}
    failed: dict[str, str | None] = {}
    figures: dict[str, str | None] = {}
    for _record, event in log.read():
        if event["run_id"] != run_id:
            continue
        payload, kind = event["payload"], event["event_type"]
        if kind == "run_started":
            started = payload
        elif kind == "question_registered":
            item_ids.append(payload["item_id"])
        elif kind == "imported_file_registered":
            figures = {f["item_id"]: f.get("error") for f in payload["item_figures"]}
        elif kind == "provider_call_completed" and payload["stage"] == "search":
            calls[payload["item_id"]] = ProviderCallCompleted.model_validate(payload)
        elif kind == "answer_synthesized" and payload["outcome"] == "failed":
            failed[payload["item_id"]] = None
    spec = (started or {}).get("spec") or {}
    if spec.get("source") != "import" or spec.get("kind") != "qa_results":
        raise ImportFormatError(
            f"run {run_id!r} is not an imported QA run (bench import qa-results)"
        )
    if not calls:
        raise ImportFormatError(
            f"run {run_id!r} ({spec['file_name']}) records no retrieved URLs or chunks: there is "
            "nothing of its lane's to re-synthesise (a simple-evals file, or a CSV without urls)"
        )
    (system,) = spec["systems"]
    return ImportedQaRun(
        run_id=run_id,
        lane=system["name"],
        dataset_sha256=spec["dataset_sha256"],
        file_name=spec["file_name"],
        file_sha256=spec["file_sha256"],
        item_ids=tuple(item_ids),
        calls=calls,
        errors={item_id: figures.get(item_id) for item_id in failed},
    )


class ImportedRetrievalLane:
    """The imported lane's recorded retrieval as a QA lane that calls nothing."""

    needs_search = True
    concurrency = 1
    price_per_1k_usd = None  # what the file's harness paid is not on record here
    normalizer_version = REPLAY_NORMALIZER
    provider = IMPORTED_PROVIDER

    def __init__(self, imported: ImportedQaRun):
        self.imported = imported
        self.name = imported.lane

    def system_ref(self) -> SystemRef:
        imported = self.imported
        return SystemRef(
            name=self.name,
            version=REPLAY_NORMALIZER,
            settings={
                "replays_import_run": imported.run_id,
                "file": imported.file_name,
                "file_sha256": imported.file_sha256,
            },
        )

    async def search(
        self, question: str, *, item_id: str, attempt: int
    ) -> ProviderCallCompleted | ProviderCallFailed:
        stored = self.imported.calls.get(item_id)
        if stored is not None:
            return stored.model_copy(update={"attempt": attempt})
        return ProviderCallFailed(
            lane=self.name,
            provider=self.provider,
            stage="search",
            item_id=item_id,
            attempt=attempt,
            request=RecordedRequest(
                method="IMPORT", url=f"import://{self.imported.file_name}", body={"query": question}
            ),
            error_class=FAILED_IMPORT,
            error_message=self.imported.errors.get(item_id)
            or "the imported file records a failure",
            landed=False,
            timings=CallTimings(queue_wait_ms=0.0, round_trip_ms=None, whole_call_ms=0.0),
            http_attempts=0,
            concurrency=1,
        )

    def normalize(self, call: ProviderCallCompleted) -> list[Chunk]:
        document: Any = json.loads(call.raw_body)
        return [Chunk.model_validate(chunk) for chunk in document["chunks"]]


def regrade_imported_qa(
    log: EventLog,
    run_id: str,
    dataset: QaDataset,
    *,
    synthesizer: Synthesizer,
    grader: Grader,
    relevance_judge: RelevanceJudge | None = None,
    argv: Sequence[str] = (),
) -> QaRunSummary:
    """A QA run of our roles over the import run's stored retrieval (see the module docstring)."""
    imported = read_imported_qa_run(log, run_id)
    if dataset.dataset.sha256 != imported.dataset_sha256:
        raise ImportFormatError(
            f"run {run_id!r} was imported against question file sha256 "
            f"{imported.dataset_sha256[:12]}…, not {dataset.dataset.name} "
            f"({dataset.dataset.sha256[:12]}…): pass the same --questions / --dataset-file"
        )
    by_id = {q.item_id: q for q in dataset.questions}
    questions = tuple(by_id[item_id] for item_id in imported.item_ids)
    return run_qa(
        log,
        replace(dataset, questions=questions),
        [ImportedRetrievalLane(imported)],
        limit=None,
        synthesizer=synthesizer,
        grader=grader,
        relevance_judge=relevance_judge,
        argv=argv,
    )
