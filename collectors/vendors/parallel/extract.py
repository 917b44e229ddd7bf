"""Parallel extract (GA): POST {base}/v1/extract, `x-api-key`.

Request: `urls: [url]`, `advanced_settings: {full_content: true, fetch_policy:
{max_age_seconds: 600, disable_cache_fallback: true}}` (600 s is the documented minimum: the
closest to a fresh fetch). Response (`ExtractResponse`): `extract_id`, `results[] {url, title,
excerpts[], full_content}`, `errors[] {url, error_type, http_status_code, content}`. Parallel
reports no render path.
"""

from __future__ import annotations

from typing import Any

from collectors.http import ProviderRequest
from collectors.http.json_fields import for_url, int_or_none, object_or_empty, objects, text_or_none
from collectors.products.extract import VendorRead

# The vendor's identity and this product's price, read by the engine registry as module names.
from collectors.vendors.parallel import AUTH, BASE_URL, KEY_ENV, PROVIDER, SDK  # noqa: F401
from collectors.vendors.parallel import EXTRACT_PRICE_BASIS as PRICE_BASIS  # noqa: F401
from collectors.vendors.parallel import EXTRACT_PRICE_SNAPSHOT as PRICE_SNAPSHOT  # noqa: F401
from collectors.vendors.parallel import EXTRACT_USD_PER_1K as PRICE_USD_PER_1K  # noqa: F401

PATH = "/v1/extract"
DOCS = "https://docs.parallel.ai/extract/extract-migration-guide"
# Checked in the SDK source: (_client.py extract, types/extract_response.py, fetch_policy_param.py)
SDK_CHECK = SDK.check(docs=DOCS)


def build_request(base_url: str, api_key: str, url: str, render: str) -> ProviderRequest:
    return AUTH.post(
        base_url,
        PATH,
        api_key,
        {
            "urls": [url],
            "advanced_settings": {
                "full_content": True,
                "fetch_policy": {"max_age_seconds": 600, "disable_cache_fallback": True},
            },
        },
    )


def read(document: Any, url: str) -> VendorRead:
    body = object_or_empty(document)
    result = for_url(objects(body.get("results")), url)
    error = for_url(objects(body.get("errors")), url)
    if result is None:
        error = error or {}
        return VendorRead(
            text=None,
            target_status_code=int_or_none(error.get("http_status_code")),
            error_class=f"vendor_{error.get('error_type') or 'error'}",
            error_message=str(error.get("content") or error.get("error_type") or "no result"),
        )
    text = text_or_none(result.get("full_content"))
    if text is None:
        excerpts = [e for e in result.get("excerpts") or [] if isinstance(e, str)]
        text = text_or_none("\n\n".join(excerpts))
    return VendorRead(text=text, final_url=text_or_none(result.get("url")))  # no target status
