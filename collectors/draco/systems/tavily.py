"""Tavily Research (providers.md §2), one lane per model (mini / pro / auto).

- Submit `POST {base}/research` (`Authorization: Bearer`), body `{input, model,
  citation_format: "numbered"}` -> `request_id`, `status`.
- Poll `GET {base}/research/{request_id}` every 10 s (<= 1,800 s) until completed / failed;
  the completed document carries `content` and `sources[]` (url, title).
- Billed credits per request are not documented (*verify*): no cost here; the price seed
  holds pro's estimate ($1.06, the midpoint of 15-250 credits x $0.008, as [V]).
- 432 (plan limit) / 433 (pay-as-you-go limit) on any call stop the lane, as on the search
  lanes: `ABORT_STATUSES` is the search module's, one list for the vendor.
- Preflight: the status of an unknown request id (404: the key was not refused; the SDK has
  no usage call).

Checked against `tavily-python` (SDK_CHECK) on 2026-12-01: `research` / `get_research`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collectors.draco.systems.documents import (
    citations,
    error_message,
    first_string,
    objects,
    require_object,
    require_text,
)
from collectors.draco.systems.driver import (
    Phase,
    Probe,
    Report,
    RunState,
    VendorApi,
    unknown_run_probe,
)
from collectors.draco.systems.sdk_checks import CHECKED_ON, SdkCheck
from collectors.http import ProviderRequest, request_id_from_headers
from collectors.search import tavily as tavily_search

SDK_CHECK = SdkCheck(
    package="tavily-python",
    version="0.8.5",
    docs="https://docs.tavily.com/documentation/api-reference/endpoint/research-get",
    checked_on=CHECKED_ON,
)
PROVIDER = "tavily"
KEY_ENV = "TAVILY_API_KEY"
BASE_URL = "https://api.tavily.com"
RESEARCH_PATH = "/research"
CITATION_FORMAT = "numbered"
MODELS = ("mini", "pro", "auto")
# USD per task by model: [V]'s midpoint estimate for pro (billed credits are not documented).
PRICE_USD_PER_TASK = {"pro": 1.06}
PRICE_BASIS = "estimate"
# 432 / 433: the key cannot go on (plan / pay-as-you-go limit); the search lanes' list.
ABORT_STATUSES = tavily_search.ABORT_STATUSES

_PHASES: dict[str, Phase] = {
    "pending": "queued",
    "queued": "queued",
    "in_progress": "running",
    "running": "running",
    "completed": "completed",
    "failed": "failed",
}


def _headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}


@dataclass(frozen=True)
class TavilyResearchApi(VendorApi):
    model: str

    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "tavily_research@1"

    def settings(self) -> dict[str, Any]:
        return {"endpoint": RESEARCH_PATH, "model": self.model, "citation_format": CITATION_FORMAT}

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        return ProviderRequest(
            "POST",
            f"{base_url.rstrip('/')}{RESEARCH_PATH}",
            _headers(api_key),
            json_body={
                "input": instruction,
                "model": self.model,
                "citation_format": CITATION_FORMAT,
            },
        )

    def read_submit(self, document: Any) -> RunState:
        document = require_object(document, "tavily research")
        status = first_string(document, "status") or ""
        phase = _PHASES.get(status.lower(), "running")
        report = None
        if phase == "completed":
            text = require_text(document.get("content"), "tavily research: content")
            report = Report(text=text, citations=citations(objects(document.get("sources"))))
        message = error_message(document)
        return RunState(
            phase=phase,
            run_id=first_string(document, "request_id"),
            vendor_status=status,
            message=message,
            report=report,
        )

    def poll(self, base_url: str, api_key: str, run: RunState) -> ProviderRequest:
        url = f"{base_url.rstrip('/')}{RESEARCH_PATH}/{run.run_id}"
        return ProviderRequest("GET", url, _headers(api_key))

    def vendor_request_id(self, headers: Mapping[str, str], document: Any) -> str | None:
        return first_string(document, "request_id") or request_id_from_headers(headers, document)

    def preflight_probe(self, base_url: str, api_key: str) -> Probe:
        return unknown_run_probe(self, base_url, api_key)
