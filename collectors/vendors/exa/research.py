"""Exa: the Agent API (beta) and `/search` with type deep-reasoning (providers.md §2).

Agent (lanes exa_agent_<effort>):
- Submit `POST {base}/agent/runs` with `Exa-Beta: agent-2026-05-07` on every request, body
  `{query, effort}`; poll `GET /agent/runs/{id}` (2 s, <= 3,600 s; runs time out after 1 h).
- Auth: providers.md says *verify* between `x-api-key` (Exa's documented header for its other
  endpoints) and the `Authorization: Bearer` of agent examples; we send `x-api-key`
  (collectors.vendors.exa.AUTH, one declaration for every Exa client).
- The completed run document carries the report: `output.text`, citations
  `output.grounding[].citations[]`, billed cost `costDollars.total` (the wire name: `exa-py`'s
  `AgentRun.cost_dollars` is declared with alias `costDollars`; `cost_dollars` is read too).
  A positive total is the billed cost.

Deep reasoning (lane exa_deep_reasoning, [V]): synchronous `POST {base}/search`, body
`{query, type: "deep-reasoning", numResults: 10, contents: {highlights: true},
outputSchema: {type: "text", description: OUTPUT_DESCRIPTION}}`; read `output.content` and
`output.grounding[].citations[]`. The description is a fixed neutral sentence, not the
instruction again: every system gets the same instruction text and nothing more. Field names
are the REST (camelCase) ones `exa-py` serialises to (`numResults`, `outputSchema`).

Checked against `exa-py` (SDK_CHECK) on 2026-12-01: `search` serialisation, `agent.runs`
create/get/list and their `AgentRun` model. Preflight for both: `GET /agent/runs` (list),
free; it checks the key (the deep-reasoning lane's `/search` itself is never called before a
run, since every call is billed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import at, first_text, objects
from collectors.products.documents import (
    billed,
    citations,
    require_object,
    require_text,
)
from collectors.products.polled import PolledRunApi
from collectors.products.research import Phase, Probe, Report, RunState, VendorApi
from collectors.vendors.exa import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK

SDK_CHECK = SDK.check(docs="https://docs.exa.ai/reference/search")
AGENT_BETA = ("Exa-Beta", "agent-2026-05-07")
AGENT_RUNS_PATH = "/agent/runs"
SEARCH_PATH = "/search"
OUTPUT_DESCRIPTION = "A report answering the query."
EFFORTS = ("low", "medium", "high", "xhigh")

_PHASES: dict[str, Phase] = {
    "queued": "queued",
    "pending": "queued",
    "created": "queued",
    "running": "running",
    "in_progress": "running",
    "completed": "completed",
    "succeeded": "completed",
    "failed": "failed",
    "cancelled": "failed",
    "canceled": "failed",
    "timed_out": "failed",
}


def _cost(document: Any) -> tuple[float | None, str | None]:
    for key in ("cost_dollars", "costDollars"):
        cost, basis = billed(at(document, key, "total"))
        if cost is not None:
            return cost, basis
    return None, None


def _grounded_citations(output: dict[str, Any]) -> tuple:
    found = []
    for grounding in objects(output.get("grounding")):
        found.extend(citations(objects(grounding.get("citations"))))
    return tuple(found)


def _agent_headers(api_key: str) -> dict[str, str]:
    return {**AUTH.header_for(api_key), AGENT_BETA[0]: AGENT_BETA[1], "Accept": "application/json"}


def _key_probe(base_url: str, api_key: str, what: str) -> Probe:
    url = f"{base_url.rstrip('/')}{AGENT_RUNS_PATH}"
    return Probe(ProviderRequest("GET", url, _agent_headers(api_key)), what=what)


def _vendor_request_id(headers: Mapping[str, str], document: Any) -> str | None:
    return first_text(document, "requestId", "request_id") or request_id_from_headers(
        headers, document
    )


@dataclass(frozen=True)
class ExaAgentApi(PolledRunApi):
    effort: str

    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "exa_agent@1"
    document_name = "exa agent run"
    phases = _PHASES
    run_id_keys = ("id", "runId", "run_id")
    status_path = AGENT_RUNS_PATH + "/{run_id}"
    auth = AUTH

    def settings(self) -> dict[str, Any]:
        return {
            "endpoint": AGENT_RUNS_PATH,
            "effort": self.effort,
            "beta": AGENT_BETA[1],
            "auth_header": AUTH.header,
        }

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        return ProviderRequest(
            method="POST",
            url=f"{base_url.rstrip('/')}{AGENT_RUNS_PATH}",
            headers=_agent_headers(api_key),
            json_body={"query": instruction, "effort": self.effort},
        )

    def completed_report(self, document: dict[str, Any]) -> Report:
        output = require_object(document.get("output"), "exa agent run: output")
        text = require_text(output.get("text"), "exa agent run: output.text")
        cost, basis = _cost(document)
        usage = document.get("usage")
        return Report(
            text=text,
            citations=_grounded_citations(output),
            cost_usd=cost,
            cost_basis=basis,
            usage=usage if isinstance(usage, dict) else {},
        )

    def poll_headers(self, api_key: str) -> dict[str, str]:
        return _agent_headers(api_key)  # the agent API's beta header on every call

    def preflight_probe(self, base_url: str, api_key: str) -> Probe:
        return _key_probe(base_url, api_key, "agent runs list")

    def vendor_request_id(self, headers: Mapping[str, str], document: Any) -> str | None:
        return _vendor_request_id(headers, document)


@dataclass(frozen=True)
class ExaDeepReasoningApi(VendorApi):
    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "exa_deep_reasoning@2"

    def settings(self) -> dict[str, Any]:
        return {
            "endpoint": SEARCH_PATH,
            "type": "deep-reasoning",
            "numResults": 10,
            "contents": {"highlights": True},
            "output_schema": {"type": "text", "description": OUTPUT_DESCRIPTION},
        }

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        return AUTH.post(
            base_url,
            SEARCH_PATH,
            api_key,
            {
                "query": instruction,
                "type": "deep-reasoning",
                "numResults": 10,
                "contents": {"highlights": True},
                "outputSchema": {"type": "text", "description": OUTPUT_DESCRIPTION},
            },
        )

    def read_submit(self, document: Any) -> RunState:
        document = require_object(document, "exa search")
        output = require_object(document.get("output"), "exa search: output")
        text = require_text(output.get("content"), "exa search: output.content")
        cost, basis = _cost(document)
        return RunState(
            phase="completed",
            run_id=first_text(document, "requestId", "request_id"),
            vendor_status="completed",
            report=Report(
                text=text, citations=_grounded_citations(output), cost_usd=cost, cost_basis=basis
            ),
        )

    def vendor_request_id(self, headers: Mapping[str, str], document: Any) -> str | None:
        return _vendor_request_id(headers, document)

    def preflight_probe(self, base_url: str, api_key: str) -> Probe:
        return _key_probe(base_url, api_key, "agent runs list (same key; /search not called)")
