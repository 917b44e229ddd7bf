"""Brave Search (https://brave.com/search/api/): the search lane. `X-Subscription-Token: <key>`.

Brave publishes no official Python SDK (so no `SDK`): the search client is held against the
documented examples of the Web Search API reference (collectors.vendors.brave.search).
"""

from __future__ import annotations

from collectors.products.identity import Auth

PROVIDER = "brave"
KEY_ENV = "BRAVE_SEARCH_API_KEY"
BASE_URL = "https://api.search.brave.com"
AUTH = Auth("X-Subscription-Token")

# --- list prices (USD); dbt's price seeds are held equal to these -------------------------
# Web search, per 1,000 queries (providers.md §1, snapshot 2026-09-17).
SEARCH_USD_PER_1K = 5.00
