"""OpenAI (https://platform.openai.com): the Responses API with web search and the deep-research
models (research systems). `Authorization: Bearer <key>`.

The LLM judge backend (collectors.llm.openai_backend) calls OpenAI through its SDK and keeps its
own settings; this module is the research systems' view of the vendor.
"""

from __future__ import annotations

from collectors.products.identity import BEARER, Sdk

PROVIDER = "openai"
KEY_ENV = "OPENAI_API_KEY"
BASE_URL = "https://api.openai.com"
AUTH = BEARER
SDK = Sdk(package="openai", version="3.57.0", checked_on="2026-12-01")

# --- list prices (USD) ---------------------------------------------------------------------
# The web search tool, per call ($25 per 1,000 calls); tokens are billed on top at model rates,
# so the research lanes have no per-task list price (no price seed row).
WEB_SEARCH_USD_PER_CALL = 25.0 / 1000
