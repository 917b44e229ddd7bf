"""OpenAI Responses API with web search (providers.md §2).

- `POST {base}/v1/responses` (`Authorization: Bearer`), body `{model, input: <instruction>,
  tools: [{type: "web_search_preview"}]}`. The instruction is sent as the single input text
  (every system gets the same text; [N-DR] split it into developer + user messages, we do not).
- gpt-5.5 / gpt-5.5-pro lanes: synchronous (one long call, stage research:submit).
- o3 / o4-mini deep-research lanes: `background: true`, then poll `GET /v1/responses/{id}`
  every 30 s (queued / in_progress / completed / failed / cancelled / incomplete).
- Report = the `output_text` parts of the `message` items of `output[]`, joined with a blank
  line when there are several; citations = their `url_citation` annotations (url, title).
- Cost: list price from usage for the deep-research models, rates quoted by [V] (date not
  stated): o3-deep-research $10 / $40 per M input / output tokens, o4-mini-deep-research
  $1.10 / $4.40, plus $25 per 1k web search calls counted as `web_search_call` output items.
  gpt-5.5 prices are unknown: no cost (dbt's price seed decides).
- Request id: the `x-request-id` response header (providers.md *verify*; OpenAI documents it).
- Preflight: `GET /v1/models/{model}` (free): the key is accepted and can use the lane's model.

Checked against `openai` (SDK_CHECK) on 2026-12-01: `responses.create/retrieve` and the
`Response` model, `models.retrieve`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collectors.http import ProviderRequest, request_id_from_headers
from collectors.http.json_fields import at, count, first_text, objects
from collectors.products.documents import require_text
from collectors.products.polled import PolledRunApi
from collectors.products.research import Phase, Probe, Report
from collectors.vendors.openai import (
    AUTH,
    BASE_URL,
    KEY_ENV,
    PROVIDER,
    SDK,
    WEB_SEARCH_USD_PER_CALL,
)
from warehouse.events import ReportCitation

SDK_CHECK = SDK.check(docs="https://platform.openai.com/docs/api-reference/responses")
RESPONSES_PATH = "/v1/responses"
MODELS_PATH = "/v1/models"
WEB_SEARCH_TOOL = {"type": "web_search_preview"}


@dataclass(frozen=True)
class TokenRates:
    input_usd_per_m: float
    output_usd_per_m: float


RATES: dict[str, TokenRates] = {
    "o3-deep-research": TokenRates(10.0, 40.0),
    "o4-mini-deep-research": TokenRates(1.10, 4.40),
}

_PHASES: dict[str, Phase] = {
    "queued": "queued",
    "in_progress": "running",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "failed",
    "incomplete": "failed",
}


def parse_response(document: dict[str, Any]) -> Report:
    texts: list[str] = []
    found: list[ReportCitation] = []
    web_searches = 0
    for item in objects(document.get("output")):
        if item.get("type") == "web_search_call":
            web_searches += 1
        if item.get("type") != "message":
            continue
        for part in objects(item.get("content")):
            if part.get("type") != "output_text":
                continue
            texts.append(require_text(part.get("text"), "openai response: output_text.text"))
            for note in objects(part.get("annotations")):
                if note.get("type") == "url_citation" and isinstance(note.get("url"), str):
                    title = note.get("title")
                    found.append(
                        ReportCitation(
                            url=note["url"], title=title if isinstance(title, str) else ""
                        )
                    )
    usage = document.get("usage") if isinstance(document.get("usage"), dict) else {}
    usage = {**usage, "web_search_calls": web_searches}
    model = first_text(document, "model") or ""
    return Report(
        text="\n\n".join(texts), citations=tuple(found), usage=usage, **_cost(model, usage)
    )


def _cost(model: str, usage: Mapping[str, Any]) -> dict[str, Any]:
    rates = next((r for name, r in RATES.items() if model.startswith(name)), None)
    if rates is None or "input_tokens" not in usage:
        return {}
    cost = (
        count(usage.get("input_tokens")) * rates.input_usd_per_m / 1e6
        + count(usage.get("output_tokens")) * rates.output_usd_per_m / 1e6
        + count(usage.get("web_search_calls")) * WEB_SEARCH_USD_PER_CALL
    )
    return {"cost_usd": cost, "cost_basis": "list_price"}


@dataclass(frozen=True)
class OpenAiResponsesApi(PolledRunApi):
    model: str
    background: bool = False

    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "openai_responses@1"
    document_name = "openai response"
    phases = _PHASES
    status_path = RESPONSES_PATH + "/{run_id}"
    auth = AUTH

    def settings(self) -> dict[str, Any]:
        rates = RATES.get(self.model)
        return {
            "endpoint": RESPONSES_PATH,
            "model": self.model,
            "tools": [WEB_SEARCH_TOOL],
            "background": self.background,
            "token_rates_usd_per_m": None
            if rates is None
            else {"input": rates.input_usd_per_m, "output": rates.output_usd_per_m},
            "web_search_usd_per_call": WEB_SEARCH_USD_PER_CALL if rates else None,
        }

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        body: dict[str, Any] = {
            "model": self.model,
            "input": instruction,
            "tools": [WEB_SEARCH_TOOL],
        }
        if self.background:
            body["background"] = True
        return AUTH.post(base_url, RESPONSES_PATH, api_key, body)

    def phase_of(self, status: str) -> Phase:
        # a synchronous response is final whatever its status says
        return _PHASES.get(status.lower(), "running" if self.background else "completed")

    def failure_message(self, document: dict[str, Any]) -> str:
        message = first_text(at(document, "error"), "message") or first_text(
            at(document, "incomplete_details"), "reason"
        )
        return message or ""

    def completed_report(self, document: dict[str, Any]) -> Report:
        return parse_response(document)

    def vendor_request_id(self, headers: Mapping[str, str], document: Any) -> str | None:
        return request_id_from_headers(headers, document)

    def preflight_probe(self, base_url: str, api_key: str) -> Probe:
        url = f"{base_url.rstrip('/')}{MODELS_PATH}/{self.model}"
        return Probe(
            ProviderRequest("GET", url, AUTH.json_headers(api_key)), what=f"model {self.model}"
        )
