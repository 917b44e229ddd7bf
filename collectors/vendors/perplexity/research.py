"""Perplexity deep research through the Agent API (providers.md §2), run in the background.

Sonar chat completions (`sonar-deep-research`) were retired on 2026-09-27 in favour of the
Agent API; the lane keeps its fixed name. Checked against `perplexityai` (SDK_CHECK) on
2026-12-01: `responses.create/retrieve`, `models.list`, the `ResponsesRequestInput` /
`ResponsesResponseOutput` models, and Perplexity's "How to migrate from Sonar" and "async
deep research" pages.

- Submit `POST {base}/v1/responses` (`Authorization: Bearer`), body `{input: <instruction>,
  preset: "deep-research", background: true}`. `deep-research` is the preset Perplexity's
  deep-research guide names; the SDK marks `preset` deprecated in favour of `effort`, but
  publishes no effort value equivalent to it, so the preset stays (PRESET, one constant).
- Poll `GET /v1/responses/{id}` every 10 s (<= 3,600 s) through queued / in_progress /
  requires_action to completed / failed / cancelled; `error.message` is the failure detail.
- Report = the SDK's `output_text`: the `output_text` parts of the `message` items of
  `output[]`, concatenated as they are. Citations = those parts' annotations with a URL; a
  missing title is taken from the `search_results` items' results with the same URL.
- Cost: `usage.cost.total_cost` is the billed amount when positive; no list-price fallback
  (the Agent API bills model tokens at provider rates plus tool fees, not a fixed table).
- Preflight: `GET /v1/models` (free), checks the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import at, first_text, objects
from collectors.products.documents import billed, require_text
from collectors.products.polled import PolledRunApi
from collectors.products.research import Phase, Probe, Report
from collectors.vendors.perplexity import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK
from warehouse.events import ReportCitation

SDK_CHECK = SDK.check(docs="https://docs.perplexity.ai/docs/agent-api/migrate-from-sonar/how-to")
RESPONSES_PATH = "/v1/responses"
MODELS_PATH = "/v1/models"
PRESET = "deep-research"

_PHASES: dict[str, Phase] = {
    "queued": "queued",
    "in_progress": "running",
    "requires_action": "running",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "failed",
}


def _search_titles(output: list[dict[str, Any]]) -> dict[str, str]:
    titles: dict[str, str] = {}
    for item in output:
        if item.get("type") != "search_results":
            continue
        for result in objects(item.get("results")):
            url, title = result.get("url"), result.get("title")
            if isinstance(url, str) and isinstance(title, str) and url not in titles:
                titles[url] = title
    return titles


def parse_response(document: dict[str, Any]) -> Report:
    output = objects(document.get("output"))
    titles = _search_titles(output)
    texts: list[str] = []
    found: list[ReportCitation] = []
    for item in output:
        if item.get("type") != "message":
            continue
        for part in objects(item.get("content")):
            if part.get("type") != "output_text":
                continue
            texts.append(require_text(part.get("text"), "perplexity response: output_text.text"))
            for note in objects(part.get("annotations")):
                url = note.get("url")
                if not isinstance(url, str) or not url:
                    continue
                title = note.get("title")
                found.append(
                    ReportCitation(
                        url=url, title=title if isinstance(title, str) else titles.get(url, "")
                    )
                )
    usage = document.get("usage") if isinstance(document.get("usage"), dict) else {}
    cost, basis = billed(at(usage, "cost", "total_cost"))
    return Report(
        text="".join(texts), citations=tuple(found), cost_usd=cost, cost_basis=basis, usage=usage
    )


@dataclass(frozen=True)
class PerplexityDeepResearchApi(PolledRunApi):
    preset: str = PRESET

    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "perplexity_agent@1"
    document_name = "perplexity response"
    phases = _PHASES
    status_path = RESPONSES_PATH + "/{run_id}"
    auth = AUTH

    def settings(self) -> dict[str, Any]:
        return {"endpoint": RESPONSES_PATH, "preset": self.preset, "background": True}

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        return AUTH.post(
            base_url,
            RESPONSES_PATH,
            api_key,
            {"input": instruction, "preset": self.preset, "background": True},
        )

    def completed_report(self, document: dict[str, Any]) -> Report:
        return parse_response(document)

    def preflight_probe(self, base_url: str, api_key: str) -> Probe:
        url = f"{base_url.rstrip('/')}{MODELS_PATH}"
        return Probe(ProviderRequest("GET", url, AUTH.json_headers(api_key)), what="models list")

    def vendor_request_id(self, headers: Mapping[str, str], document: Any) -> str | None:
        return first_text(document, "id") or request_id_from_headers(headers, document)
