"""Perplexity sonar-deep-research through chat completions (providers.md §2): synchronous.

`POST {base}/chat/completions` (`Authorization: Bearer`), body `{model: "sonar-deep-research",
messages: [{role: "user", content: <instruction>}]}`. Report = `choices[0].message.content`;
citations = `citations[]` (URLs; the title is taken from `search_results[]` when an entry has
the same URL, else ""). The async variant is *verify* in providers.md and not used.

Cost: a positive `usage.cost.total_cost` is billed; otherwise list price from usage at the
rates quoted in braintrust-proxy issue #673 (*verify*): $2 / $8 per M input / output tokens,
$2 per M citation tokens, $3 per M reasoning tokens, $5 per 1k search queries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collectors.draco.systems.documents import (
    billed,
    count,
    first_string,
    obj,
    objects,
    require_object,
    require_text,
)
from collectors.draco.systems.driver import Report, RunState, VendorApi, VendorShapeError
from collectors.http import ProviderRequest, request_id_from_headers
from warehouse.events import ReportCitation

PROVIDER = "perplexity"
KEY_ENV = "PERPLEXITY_API_KEY"
BASE_URL = "https://api.perplexity.ai"
COMPLETIONS_PATH = "/chat/completions"
MODEL = "sonar-deep-research"
# USD per million tokens (per 1k for searches), keyed by the usage field they price.
USAGE_RATES_USD = {
    "prompt_tokens": 2.0 / 1e6,
    "completion_tokens": 8.0 / 1e6,
    "citation_tokens": 2.0 / 1e6,
    "reasoning_tokens": 3.0 / 1e6,
    "num_search_queries": 5.0 / 1e3,
}


def _cost(usage: Mapping[str, Any]) -> tuple[float | None, str | None]:
    cost, basis = billed(obj(usage, "cost", "total_cost"))
    if cost is not None:
        return cost, basis
    if "prompt_tokens" not in usage:
        return None, None
    return sum(count(usage.get(k)) * rate for k, rate in USAGE_RATES_USD.items()), "list_price"


@dataclass(frozen=True)
class PerplexityDeepResearchApi(VendorApi):
    model: str = MODEL

    provider = PROVIDER
    key_env = KEY_ENV
    base_url = BASE_URL
    version = "perplexity_chat@1"

    def settings(self) -> dict[str, Any]:
        return {
            "endpoint": COMPLETIONS_PATH,
            "model": self.model,
            "synchronous": True,
            "usage_rates_usd": USAGE_RATES_USD,
        }

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        return ProviderRequest(
            "POST",
            f"{base_url.rstrip('/')}{COMPLETIONS_PATH}",
            {"Authorization": f"Bearer {api_key}", "Accept": "application/json"},
            json_body={"model": self.model, "messages": [{"role": "user", "content": instruction}]},
        )

    def read_submit(self, document: Any) -> RunState:
        document = require_object(document, "perplexity completion")
        choices = objects(document.get("choices"))
        if not choices:
            raise VendorShapeError("perplexity completion: no choices")
        text = require_text(
            obj(choices[0], "message", "content"), "perplexity: choices[0].message.content"
        )
        titles = {
            r["url"]: r.get("title") if isinstance(r.get("title"), str) else ""
            for r in objects(document.get("search_results"))
            if isinstance(r.get("url"), str)
        }
        urls = document.get("citations") if isinstance(document.get("citations"), list) else []
        found = tuple(
            ReportCitation(url=url, title=titles.get(url, ""))
            for url in urls
            if isinstance(url, str)
        )
        usage = document.get("usage") if isinstance(document.get("usage"), dict) else {}
        cost, basis = _cost(usage)
        return RunState(
            phase="completed",
            run_id=first_string(document, "id"),
            vendor_status="completed",
            report=Report(text=text, citations=found, cost_usd=cost, cost_basis=basis, usage=usage),
        )

    def vendor_request_id(self, headers: Mapping[str, str], document: Any) -> str | None:
        return first_string(document, "id") or request_id_from_headers(headers, document)
