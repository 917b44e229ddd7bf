"""Tavily Research (providers.md §2), one lane per model (mini / pro / auto).

- Submit `POST {base}/research` (`Authorization: Bearer`), body `{input, model,
  citation_format: "numbered"}` -> `request_id`, `status`.
- Poll `GET {base}/research/{request_id}` every 10 s (<= 1,800 s) until completed / failed;
  the completed document carries `content` and `sources[]` (url, title).
- Billed credits per request are not documented (*verify*): no cost here; the price seed
  holds pro's estimate (collectors.vendors.tavily: the midpoint of 15-250 credits x $0.008,
  as [V]).
- 432 (plan limit) / 433 (pay-as-you-go limit) on any call stop the lane, as on the search
  lanes: `ABORT_STATUSES` is the vendor's (collectors.vendors.tavily), one list for every lane.
- Preflight: the status of an unknown request id (404: the key was not refused; the SDK has
  no usage call).

Checked against `tavily-python` (SDK_CHECK) on 2026-12-01: `research` / `get_research`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import first_text, objects
from collectors.products.documents import (
    citations,
    require_text,
)
from collectors.products.polled import PolledRunApi
from collectors.products.research import (
    Phase,
    Probe,
    Report,
    unknown_run_probe,
)
from collectors.vendors.tavily import ABORT_STATUSES as ABORT_STATUSES  # the lane registry's
from collectors.vendors.tavily import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK

SDK_CHECK = SDK.check(
    docs="https://docs.tavily.com/documentation/api-reference/endpoint/research-get"
)
RESEARCH_PATH = "/research"
CITATION_FORMAT = "numbered"
MODELS = ("mini", "pro", "auto")

_PHASES: dict[str, Phase] = {
    "pending": "queued",
    "queued": "queued",
    "in_progress": "running",
    "running": "running",
    "completed": "completed",
    "failed": "failed",
}


@dataclass(frozen=True)
class TavilyResearchApi(PolledRunApi):
    model: str

    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "tavily_research@1"
    document_name = "tavily research"
    phases = _PHASES
    run_id_keys = ("request_id",)
    status_path = RESEARCH_PATH + "/{run_id}"
    auth = AUTH

    def settings(self) -> dict[str, Any]:
        return {"endpoint": RESEARCH_PATH, "model": self.model, "citation_format": CITATION_FORMAT}

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        return AUTH.post(
            base_url,
            RESEARCH_PATH,
            api_key,
            {
                "input": instruction,
                "model": self.model,
                "citation_format": CITATION_FORMAT,
            },
        )

    def completed_report(self, document: dict[str, Any]) -> Report:
        text = require_text(document.get("content"), "tavily research: content")
        return Report(text=text, citations=citations(objects(document.get("sources"))))

    def vendor_request_id(self, headers: Mapping[str, str], document: Any) -> str | None:
        return first_text(document, "request_id") or request_id_from_headers(headers, document)

    def preflight_probe(self, base_url: str, api_key: str) -> Probe:
        return unknown_run_probe(self, base_url, api_key)
