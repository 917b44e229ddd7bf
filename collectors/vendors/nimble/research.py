"""Nimble Web Search Agents (providers.md §2): one disposable research agent per run.

Checked against `nimble-python` (SDK_CHECK) on 2026-12-01: `agents.run` (POST
/v2/agents/runs -> `AgentRunResponse`), `agents.runs.get` / `agents.runs.result` (both take
`agent_id`), `agents.list`, and Nimble's DRACO harness, which reads `run.web_search_agent_id`.

- Submit `POST {base}/v2/agents/runs` (`Authorization: Bearer`), body `{input, effort,
  use_case: "research"}`. The response is the run: `id` (`task_run_...`) and
  `web_search_agent_id`, the disposable agent the run belongs to; both are needed to poll.
- Poll `GET /v2/agents/{web_search_agent_id}/runs/{id}` until `completed` / `failed` /
  `cancelled` (5 s, <= 3,600 s [N-DR]); `error.message` is the failure detail. A submit
  answer without `web_search_agent_id` is malformed (never a poll of `/v2/agents//runs/...`).
- Result `GET .../runs/{run_id}/result`: 409 while queued/running (ask again, stage
  `research:result:<n>`), 422 when the run failed or was cancelled (terminal, vendor_failed).
- Report = `output.content` exactly as returned; it ends with a "Source index:" block, which
  the bibliography normaliser strips later (raw stays raw). Citations = `output.trust.sources[]`.
- Cost is not returned: dbt falls back to the price seed (README figures, basis "estimate").
- Preflight: `GET /v2/agents` (the SDK's `agents.list`), free, checks the key; no run id is
  made up for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import at, first_text, objects
from collectors.products.documents import citations, require_object, require_text
from collectors.products.research import (
    Phase,
    Probe,
    Report,
    RunState,
    VendorApi,
    VendorShapeError,
)
from collectors.vendors.nimble import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK

SDK_CHECK = SDK.check(docs="https://docs.nimbleway.com/nimble-sdk/web-search-agents/quickstart")
RUN_PATH = "/v2/agents/runs"  # the one-call agents.run (disposable agent); see docstring
AGENTS_PATH = "/v2/agents"
AGENT_ID = "web_search_agent_id"
USE_CASE = "research"
EFFORTS = {"low": "low", "medium": "medium", "high": "high", "xhigh": "x-high", "max": "max"}

_PHASES: dict[str, Phase] = {
    "queued": "queued",
    "pending": "queued",
    "running": "running",
    "in_progress": "running",
    "completed": "completed",
    "succeeded": "completed",
    "failed": "failed",
    "cancelled": "failed",
    "canceled": "failed",
}


@dataclass(frozen=True)
class NimbleAgentApi(VendorApi):
    effort: str  # low | medium | high | x-high | max

    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "nimble_agent@2"
    result_pending_statuses = frozenset({409})
    result_failed_statuses = frozenset({422})

    def settings(self) -> dict[str, Any]:
        return {"endpoint": RUN_PATH, "effort": self.effort, "use_case": USE_CASE}

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        return AUTH.post(
            base_url,
            RUN_PATH,
            api_key,
            {"input": instruction, "effort": self.effort, "use_case": USE_CASE},
        )

    def read_submit(self, document: Any) -> RunState:
        state = self.read_poll(document)
        if AGENT_ID not in state.ids:
            raise VendorShapeError(f"nimble run: no {AGENT_ID} (the poll path needs it)")
        return state

    def read_poll(self, document: Any) -> RunState:
        document = require_object(document, "nimble run")
        status = first_text(document, "status") or ""
        agent_id = first_text(document, AGENT_ID)
        return RunState(
            phase=_PHASES.get(status.lower(), "running"),
            run_id=first_text(document, "id"),
            vendor_status=status,
            message=first_text(at(document, "error"), "message") or "",
            ids={AGENT_ID: agent_id} if agent_id else {},
        )

    def _run_url(self, base_url: str, run: RunState) -> str:
        return f"{base_url.rstrip('/')}{AGENTS_PATH}/{run.ids[AGENT_ID]}/runs/{run.run_id}"

    def poll(self, base_url: str, api_key: str, run: RunState) -> ProviderRequest:
        return ProviderRequest("GET", self._run_url(base_url, run), AUTH.json_headers(api_key))

    def result(self, base_url: str, api_key: str, run: RunState) -> ProviderRequest:
        return ProviderRequest(
            "GET", f"{self._run_url(base_url, run)}/result", AUTH.json_headers(api_key)
        )

    def read_result(self, document: Any) -> Report:
        output = require_object(at(document, "output"), "nimble result: output")
        text = require_text(output.get("content"), "nimble result: output.content")
        sources = objects(at(output, "trust", "sources"))
        return Report(text=text, citations=citations(sources))

    def vendor_request_id(self, headers: Mapping[str, str], document: Any) -> str | None:
        return first_text(document, "request_id") or request_id_from_headers(headers, document)

    def preflight_probe(self, base_url: str, api_key: str) -> Probe:
        request = ProviderRequest(
            "GET", f"{base_url.rstrip('/')}{AGENTS_PATH}", AUTH.json_headers(api_key)
        )
        return Probe(request, what="agents list")
