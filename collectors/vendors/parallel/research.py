"""Parallel Task API (providers.md §2), one lane per processor.

- Submit `POST {base}/v1/tasks/runs` (`x-api-key`), body `{input, processor, task_spec:
  {output_schema: {type: "text", description: OUTPUT_DESCRIPTION}}}` -> `run_id` (`trun_...`),
  `status: queued`. The description is a fixed neutral sentence, not the instruction again:
  every system gets the same instruction text and nothing more.
- Poll `GET /v1/tasks/runs/{run_id}` every 20 s (<= 3 h, as [V]) through queued /
  action_required / running / cancelling to completed / failed / cancelled.
- Result `GET /v1/tasks/runs/{run_id}/result` once completed: `output.content`, citations
  `output.basis[].citations[]`. (The blocking `?timeout=` form [N-DR] used is not needed when we
  poll first.)
- Cost is not returned: the list price per processor (price seed) applies.
- Preflight: the status of an unknown run id (404: the key was not refused; no zero-cost
  key endpoint is documented).

The requests and where a result keeps its citations are the vendor's Task API wire
(`collectors.vendors.parallel`), shared with the SimpleQA answer lane `parallel_answer`; this
module adds what is DRACO's: the report schema, the phase map, polling and preflight.

Checked against `parallel-web` (SDK_CHECK) on 2026-12-01: `task_run.create/retrieve/result`,
the `TaskRun` and `TaskRunResult` models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import at, first_text
from collectors.products.documents import (
    citations,
    require_object,
    require_text,
)
from collectors.products.polled import PolledRunApi
from collectors.products.research import (
    Phase,
    Probe,
    Report,
    RunState,
    unknown_run_probe,
)
from collectors.vendors.parallel import (
    BASE_URL,
    KEY_ENV,
    PROVIDER,
    SDK,
    TASK_RUNS_PATH,
    create_task_run,
    output_citations,
    task_run_result,
    task_run_status,
)

SDK_CHECK = SDK.check(docs="https://docs.parallel.ai/api-reference/tasks/retrieve-task-run-result")
OUTPUT_DESCRIPTION = "A report answering the input."

_PHASES: dict[str, Phase] = {
    "queued": "queued",
    "action_required": "running",
    "running": "running",
    "cancelling": "running",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "failed",
}


@dataclass(frozen=True)
class ParallelTaskApi(PolledRunApi):
    processor: str

    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "parallel_task@1"
    document_name = "parallel task run"
    phases = _PHASES
    run_id_keys = ("run_id",)

    def settings(self) -> dict[str, Any]:
        return {
            "endpoint": TASK_RUNS_PATH,
            "processor": self.processor,
            "output_schema": {"type": "text", "description": OUTPUT_DESCRIPTION},
        }

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        return create_task_run(
            base_url,
            api_key,
            input=instruction,
            processor=self.processor,
            output_schema={"type": "text", "description": OUTPUT_DESCRIPTION},
        )

    def poll(self, base_url: str, api_key: str, run: RunState) -> ProviderRequest:
        # the Task API's wire is the vendor module's, shared with the answer lane
        return task_run_status(base_url, api_key, str(run.run_id))

    def result(self, base_url: str, api_key: str, run: RunState) -> ProviderRequest:
        return task_run_result(base_url, api_key, str(run.run_id))

    def read_result(self, document: Any) -> Report:
        output = require_object(at(document, "output"), "parallel result: output")
        text = require_text(output.get("content"), "parallel result: output.content")
        found = citations(output_citations(output))
        usage = document.get("usage") if isinstance(document, dict) else None
        return Report(text=text, citations=found, usage=usage if isinstance(usage, dict) else {})

    def vendor_request_id(self, headers: Mapping[str, str], document: Any) -> str | None:
        return first_text(document, "run_id") or request_id_from_headers(headers, document)

    def preflight_probe(self, base_url: str, api_key: str) -> Probe:
        return unknown_run_probe(self, base_url, api_key)
