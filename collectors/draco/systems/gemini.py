"""Gemini Deep Research through the Interactions API (providers.md §2).

- Submit `POST {base}/v1beta/interactions` with `{agent, input: <instruction>, background:
  true}`; poll the interaction every 10 s (<= 3,600 s [N-DR]) until completed / failed /
  cancelled (in_progress and requires_action keep polling).
- providers.md marks auth header and GET path *verify*: we use the Gemini API's documented key
  header `x-goog-api-key` (AUTH_HEADER) and `GET /v1beta/interactions/{id}` (the resource path
  the create call returns), each in one constant.
- Report = the `text` of the text items of `outputs[]` (joined with a blank line when there
  are several); citations = their `url_citation` annotations (url, title). `usage` is kept;
  no price is documented, so no cost (dbt's price seed decides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from collectors.draco.systems.documents import (
    first_string,
    obj,
    objects,
    require_object,
    require_text,
)
from collectors.draco.systems.driver import Phase, Report, RunState, VendorApi, VendorShapeError
from collectors.http import ProviderRequest
from warehouse.events import ReportCitation

PROVIDER = "gemini"
KEY_ENV = "GEMINI_API_KEY"
BASE_URL = "https://generativelanguage.googleapis.com"
AUTH_HEADER = "x-goog-api-key"
INTERACTIONS_PATH = "/v1beta/interactions"
AGENTS = {
    "gemini_deep_research": "deep-research-preview-04-2026",
    "gemini_deep_research_max": "deep-research-max-preview-04-2026",
}

_PHASES: dict[str, Phase] = {
    "in_progress": "running",
    "requires_action": "running",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "failed",
}


def _headers(api_key: str) -> dict[str, str]:
    return {AUTH_HEADER: api_key, "Accept": "application/json"}


def parse_interaction(document: dict[str, Any]) -> Report:
    if not isinstance(document.get("outputs"), list):
        raise VendorShapeError("gemini interaction: completed without an outputs list")
    texts: list[str] = []
    found: list[ReportCitation] = []
    for output in objects(document.get("outputs")):
        if output.get("type", "text") != "text":
            continue
        texts.append(require_text(output.get("text"), "gemini interaction: outputs[].text"))
        for note in objects(output.get("annotations")):
            if note.get("type", "url_citation") == "url_citation" and isinstance(
                note.get("url"), str
            ):
                title = note.get("title")
                found.append(
                    ReportCitation(url=note["url"], title=title if isinstance(title, str) else "")
                )
    usage = document.get("usage")
    return Report(
        text="\n\n".join(texts),
        citations=tuple(found),
        usage=usage if isinstance(usage, dict) else {},
    )


@dataclass(frozen=True)
class GeminiDeepResearchApi(VendorApi):
    agent: str

    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "gemini_interactions@1"

    def settings(self) -> dict[str, Any]:
        return {
            "endpoint": INTERACTIONS_PATH,
            "agent": self.agent,
            "background": True,
            "auth_header": AUTH_HEADER,
        }

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        return ProviderRequest(
            "POST",
            f"{base_url.rstrip('/')}{INTERACTIONS_PATH}",
            _headers(api_key),
            json_body={"agent": self.agent, "input": instruction, "background": True},
        )

    def read_submit(self, document: Any) -> RunState:
        document = require_object(document, "gemini interaction")
        status = first_string(document, "status") or ""
        phase = _PHASES.get(status.lower(), "running")
        return RunState(
            phase=phase,
            run_id=first_string(document, "id", "name"),
            vendor_status=status,
            message=first_string(obj(document, "error"), "message") or "",
            report=parse_interaction(document) if phase == "completed" else None,
        )

    def poll(self, base_url: str, api_key: str, run: RunState) -> ProviderRequest:
        url = f"{base_url.rstrip('/')}{INTERACTIONS_PATH}/{run.run_id}"
        return ProviderRequest("GET", url, _headers(api_key))
