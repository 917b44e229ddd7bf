"""Tavily (https://tavily.com): search lanes and the answer lane (`/search`), Research (research
systems), extract (live extraction). `Authorization: Bearer <key>`."""

from __future__ import annotations

from collectors.products.identity import BEARER, Sdk

PROVIDER = "tavily"
KEY_ENV = "TAVILY_API_KEY"
BASE_URL = "https://api.tavily.com"
AUTH = BEARER
SDK = Sdk(package="tavily-python", version="0.8.5", checked_on="2026-12-01")
# Tavily's own statuses for a key that cannot go on, on any endpoint: every further call fails
# the same way, so the lane stops (error_class "auth", like a 402) instead of logging hundreds of
# landed non-answers.
ABORT_STATUSES = (
    (432, "Tavily: plan usage limit exceeded (out of credits)"),
    (433, "Tavily: pay-as-you-go limit exceeded"),
)

# --- list prices (USD); dbt's price seeds are held equal to these -------------------------
# Search: 1 credit x $0.008 per query, basic and fast alike; the answer lane (`include_answer`)
# costs the same credit. Per 1,000 queries, snapshot 2026-09-17 (providers.md §1).
SEARCH_USD_PER_1K = 8.00
# Research, per task by model: [V]'s midpoint estimate for pro (15-250 credits x $0.008);
# billed credits are not documented.
RESEARCH_USD_PER_TASK = {"pro": 1.06}
RESEARCH_PRICE_BASIS = "estimate"
# Extract: basic 1 credit / 5 URLs, advanced 2 credits / 5 URLs at $0.008/credit, per 1,000 URLs
# (providers.md §3, derived).
EXTRACT_USD_PER_1K: dict[str, float | None] = {"basic": 1.60, "advanced": 3.20}
EXTRACT_PRICE_BASIS = "credits per 5 URLs at $0.008/credit (derived); failed URLs assumed billed"
EXTRACT_PRICE_SNAPSHOT = "2026-12-01"
