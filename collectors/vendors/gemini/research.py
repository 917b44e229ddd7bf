"""Gemini Deep Research through the Interactions API (providers.md §2).

Checked against `google-genai` (SDK_CHECK) on 2026-12-01: its `interactions.create/get`, the
`Interaction` model and its `output_text` helper, and Google's "Interactions API breaking
changes (May 2026)" page.

- Submit `POST {base}/v1/interactions` (`x-goog-api-key`) with `{agent, input: <instruction>,
  background: true}`; poll `GET /v1/interactions/{id}` every 10 s (<= 3,600 s [N-DR]). The
  path is the SDK's: its default API version for the Gemini Developer API is `v1`.
- Statuses (the SDK's `InteractionStatus`): queued -> queued; in_progress, requires_action,
  idle, requires_continuation -> running (the SDK says continuation of a background
  interaction is server-managed); completed -> completed; failed, cancelled, incomplete,
  budget_exceeded -> failed (terminal: polling them again never changes them; the raw document
  is in the log). `errors[].message` is the failure detail.
- Since 2026-05-26 an interaction carries `steps[]` (the legacy `outputs[]` was removed on
  2026-06-08). Report = the SDK's `output_text` rule: the text items of the trailing
  `model_output` steps (after the last user_input, thought steps skipped), concatenated as
  they are; citations = those text items' `url_citation` annotations (url, title).
- `usage` is kept; no price is documented, so no cost (dbt's price seed decides).
- Preflight: the models list (`GET /v1/models?pageSize=1`), free, checks the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from collectors.http import ProviderRequest
from collectors.http.json_fields import first_text, objects
from collectors.products.documents import require_text
from collectors.products.polled import PolledRunApi
from collectors.products.research import (
    Phase,
    Probe,
    Report,
    VendorShapeError,
)
from collectors.vendors.gemini import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK
from warehouse.events import ReportCitation

SDK_CHECK = SDK.check(
    docs="https://ai.google.dev/gemini-api/docs/interactions-breaking-changes-may-2026"
)
INTERACTIONS_PATH = "/v1/interactions"
MODELS_PATH = "/v1/models"
AGENTS = {
    "gemini_deep_research": "deep-research-preview-04-2026",
    "gemini_deep_research_max": "deep-research-max-preview-04-2026",
}

_PHASES: dict[str, Phase] = {
    "queued": "queued",
    "in_progress": "running",
    "requires_action": "running",
    "idle": "running",
    "requires_continuation": "running",  # server-managed for background interactions
    "completed": "completed",
    "failed": "failed",
    "cancelled": "failed",
    "incomplete": "failed",
    "budget_exceeded": "failed",
}


def _trailing_text_items(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The text content items the SDK's `Interaction.output_text` joins, in order: walking
    back from the end, thought steps are skipped, the first non-model_output step after text
    was found (or any user_input step) ends the run of text, and inside a step a non-text item
    after text ends it too."""
    found: list[dict[str, Any]] = []
    collecting = False
    for step in reversed(steps):
        kind = step.get("type")
        if kind == "user_input":
            break
        if kind == "thought":
            continue
        if kind != "model_output":
            if collecting:
                break
            continue
        stop = False
        for item in reversed(objects(step.get("content"))):
            if item.get("type") == "text":
                collecting = True
                found.append(item)
            elif collecting:
                stop = True
                break
        if stop:
            break
    return list(reversed(found))


def parse_interaction(document: dict[str, Any]) -> Report:
    steps = document.get("steps")
    if not isinstance(steps, list):
        raise VendorShapeError("gemini interaction: completed without a steps list")
    texts: list[str] = []
    found: list[ReportCitation] = []
    for item in _trailing_text_items(objects(steps)):
        texts.append(require_text(item.get("text"), "gemini interaction: steps[].content[].text"))
        for note in objects(item.get("annotations")):
            if note.get("type") == "url_citation" and isinstance(note.get("url"), str):
                title = note.get("title")
                found.append(
                    ReportCitation(url=note["url"], title=title if isinstance(title, str) else "")
                )
    usage = document.get("usage")
    return Report(
        text="".join(texts),
        citations=tuple(found),
        usage=usage if isinstance(usage, dict) else {},
    )


def _failure_detail(document: dict[str, Any]) -> str:
    messages = [m for e in objects(document.get("errors")) if (m := first_text(e, "message"))]
    return "; ".join(messages)


@dataclass(frozen=True)
class GeminiDeepResearchApi(PolledRunApi):
    agent: str

    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "gemini_interactions@2"
    document_name = "gemini interaction"
    phases = _PHASES
    status_path = INTERACTIONS_PATH + "/{run_id}"
    auth = AUTH

    def settings(self) -> dict[str, Any]:
        return {
            "endpoint": INTERACTIONS_PATH,
            "agent": self.agent,
            "background": True,
            "auth_header": AUTH.header,
        }

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        return AUTH.post(
            base_url,
            INTERACTIONS_PATH,
            api_key,
            {"agent": self.agent, "input": instruction, "background": True},
        )

    def failure_message(self, document: dict[str, Any]) -> str:
        return _failure_detail(document)

    def completed_report(self, document: dict[str, Any]) -> Report:
        return parse_interaction(document)

    def preflight_probe(self, base_url: str, api_key: str) -> Probe:
        url = f"{base_url.rstrip('/')}{MODELS_PATH}?pageSize=1"
        return Probe(ProviderRequest("GET", url, AUTH.json_headers(api_key)), what="models list")
