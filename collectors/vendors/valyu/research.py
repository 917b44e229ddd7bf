"""Valyu DeepResearch (providers.md §2), one lane per mode (fast / standard / heavy / max).

- Submit `POST {base}/v1/deepresearch/tasks` (`X-API-Key`), body as [V] sent it through the
  SDK: `{input, model: <mode>, search: {search_type: "all"}, code_execution: true}`.
- Poll `GET /v1/deepresearch/tasks/{id}/status` every 15 s (<= 3,600 s, as [V]) until
  completed / failed / cancelled; the completed status document carries the report.
- providers.md marks the base host *verify*: we use Valyu's documented API host
  `https://api.valyu.ai` (BASE_URL, overridable like every base URL).
- Report = `output` (a string, or `{markdown|content}` when it is an object), citations =
  `sources[]` (url, title); `cost` is the billed amount when positive.
- The status endpoint answers 401/403 transiently now and then (valyu-benchmarks' runner
  retries those polls, and the SDK's `status()` retries every transient failure): up to
  POLL_AUTH_RETRIES refusals in a row count as failed polls, not a lane abort. 402 aborts.
- Preflight: `GET /v1/deepresearch/list?limit=1` (the SDK's `deepresearch.list`), free.

Checked against `valyu` (SDK_CHECK) on 2026-12-01: `deepresearch.create/status/list` and the
`DeepResearchStatusResponse` model (statuses queued, running, awaiting_input, paused,
completed, failed, cancelled; `awaiting_input`/`paused` only happen with HITL, which we never
enable, so they keep polling).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import at, first_text, objects
from collectors.products.documents import billed, citations
from collectors.products.polled import PolledRunApi
from collectors.products.research import (
    Phase,
    Probe,
    Report,
    VendorShapeError,
)
from collectors.vendors.valyu import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK

SDK_CHECK = SDK.check(docs="https://docs.valyu.ai/api-reference/endpoint/deepresearch-status")
TASKS_PATH = "/v1/deepresearch/tasks"
LIST_PATH = "/v1/deepresearch/list"
MODES = ("fast", "standard", "heavy", "max")
POLL_AUTH_RETRIES = 3

_PHASES: dict[str, Phase] = {
    "queued": "queued",
    "pending": "queued",
    "running": "running",
    "in_progress": "running",
    "awaiting_input": "running",
    "paused": "running",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "failed",
    "canceled": "failed",
}


def _report_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        for key in ("markdown", "content", "text"):
            if isinstance(output.get(key), str):
                return output[key]
    raise VendorShapeError(f"valyu task: output is not text ({type(output).__name__})")


@dataclass(frozen=True)
class ValyuDeepResearchApi(PolledRunApi):
    mode: str

    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "valyu_deepresearch@2"
    document_name = "valyu task"
    phases = _PHASES
    run_id_keys = ("deepresearch_id", "task_id", "id")
    status_path = TASKS_PATH + "/{run_id}/status"
    auth = AUTH
    poll_auth_retries = POLL_AUTH_RETRIES

    def settings(self) -> dict[str, Any]:
        return {
            "endpoint": TASKS_PATH,
            "model": self.mode,
            "search": {"search_type": "all"},
            "code_execution": True,
        }

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        return AUTH.post(
            base_url,
            TASKS_PATH,
            api_key,
            {
                "input": instruction,
                "model": self.mode,
                "search": {"search_type": "all"},
                "code_execution": True,
            },
        )

    def completed_report(self, document: dict[str, Any]) -> Report:
        cost, basis = billed(document.get("cost"))
        if cost is None:
            cost, basis = billed(at(document, "cost", "total"))
        usage = document.get("usage")
        return Report(
            text=_report_text(document.get("output")),
            citations=citations(objects(document.get("sources"))),
            cost_usd=cost,
            cost_basis=basis,
            usage=usage if isinstance(usage, dict) else {},
        )

    def vendor_request_id(self, headers: Mapping[str, str], document: Any) -> str | None:
        return first_text(document, "deepresearch_id", "task_id") or request_id_from_headers(
            headers, document
        )

    def preflight_probe(self, base_url: str, api_key: str) -> Probe:
        url = f"{base_url.rstrip('/')}{LIST_PATH}?limit=1"
        return Probe(ProviderRequest("GET", url, AUTH.json_headers(api_key)), what="tasks list")
