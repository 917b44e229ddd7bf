"""Firecrawl (https://firecrawl.dev): the search lane and scrape (live extraction).
`Authorization: Bearer fc-<key>`."""

from __future__ import annotations

from collectors.products.identity import BEARER, Sdk

PROVIDER = "firecrawl"
KEY_ENV = "FIRECRAWL_API_KEY"
BASE_URL = "https://api.firecrawl.dev"
AUTH = BEARER
SDK = Sdk(package="firecrawl-py", version="4.54.0", checked_on="2026-12-01")

# --- list prices (USD); dbt's price seeds are held equal to these -------------------------
# Search: Standard plan $99 / 100k credits, 2 credits per 10 results; per 1,000 queries,
# snapshot 2026-09-17.
SEARCH_USD_PER_1K = 1.98
# Scrape: 1 credit per page at the Standard plan rate, per 1,000 pages (providers.md §3, derived).
SCRAPE_USD_PER_1K: float | None = 0.99
SCRAPE_PRICE_BASIS = "1 credit per page, Standard plan $99/100k credits (derived)"
SCRAPE_PRICE_SNAPSHOT = "2026-12-01"
