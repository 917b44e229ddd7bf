"""You.com Research (providers.md §2): one synchronous call.

`POST {base}/v1/research` (`X-API-Key`), body `{input, research_effort: "exhaustive"}`; the
response carries the report: `output.content`, citations `output.sources[]` (url, title).
Long client timeout (600 s, as [V]) and few attempts: a retry re-runs (and re-bills) the
whole research. No cost in the response: list price $0.45 per request (price seed).
Key: `YDC_API_KEY` (You.com's own name), `YOU_API_KEY` accepted as a fallback (KEY_ENVS).
Preflight: the status of an unknown background task id (`GET /v1/research/{task_id}` -> 404,
the SDK's `get_research_task`, whose documented 404 is "task not found"), free: it shows the
endpoint answers and the key was not refused, not that the key is valid; the research call
itself is never made before a run.

Checked against `youdotcom` (SDK_CHECK) on 2026-12-01: `research` (`ResearchResponse`) and
`research_helpers` (the background task path).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import first_text, objects
from collectors.products.documents import citations, require_object, require_text
from collectors.products.research import (
    PREFLIGHT_RUN_ID,
    Probe,
    Report,
    RunState,
    VendorApi,
    unknown_id_probe,
)
from collectors.vendors.youcom import AUTH, BASE_URL, KEY_ENV, KEY_ENVS, PROVIDER, SDK

SDK_CHECK = SDK.check(docs="https://you.com/docs/guides/research/background-requests")
RESEARCH_PATH = "/v1/research"
EFFORT = "exhaustive"


@dataclass(frozen=True)
class YouResearchApi(VendorApi):
    effort: str = EFFORT

    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "youcom_research@1"

    @property
    def key_envs(self) -> tuple[str, ...]:
        return KEY_ENVS

    def settings(self) -> dict[str, Any]:
        return {"endpoint": RESEARCH_PATH, "research_effort": self.effort, "synchronous": True}

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        return AUTH.post(
            base_url, RESEARCH_PATH, api_key, {"input": instruction, "research_effort": self.effort}
        )

    def read_submit(self, document: Any) -> RunState:
        document = require_object(document, "you.com research")
        output = require_object(document.get("output"), "you.com research: output")
        text = require_text(output.get("content"), "you.com research: output.content")
        return RunState(
            phase="completed",
            run_id=first_text(document, "id", "request_id"),
            vendor_status="completed",
            report=Report(text=text, citations=citations(objects(output.get("sources")))),
        )

    def vendor_request_id(self, headers: Mapping[str, str], document: Any) -> str | None:
        return first_text(document, "request_id", "id") or request_id_from_headers(
            headers, document
        )

    def preflight_probe(self, base_url: str, api_key: str) -> Probe:
        url = f"{base_url.rstrip('/')}{RESEARCH_PATH}/{PREFLIGHT_RUN_ID}"
        request = ProviderRequest("GET", url, AUTH.json_headers(api_key))
        return unknown_id_probe(request, "an unknown task id")
