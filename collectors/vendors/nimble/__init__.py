"""Nimble (https://nimbleway.com): the search lane and the answer lane (`/v2/search`), Web Search
Agents (research systems), Extract (live extraction). `Authorization: Bearer <key>`."""

from __future__ import annotations

from collectors.products.identity import BEARER, Sdk

PROVIDER = "nimble"
KEY_ENV = "NIMBLE_API_KEY"
BASE_URL = "https://sdk.nimbleway.com"
AUTH = BEARER
SDK = Sdk(package="nimble-python", version="1.6.0", checked_on="2026-12-01")

# --- list prices (USD); dbt's price seeds are held equal to these -------------------------
# Search tier (`search_depth: standard`), per 1,000 queries; unconfirmed at source (Lite tier:
# 1.10). The answer lane (`include_answer`) is billed as a search. Snapshot 2026-09-17.
SEARCH_USD_PER_1K = 5.00
# Web Search Agents, per task by effort tier: the harness README's per-item figures, basis not
# stated [N-DR], hence "estimate"; no snapshot date given.
AGENT_USD_PER_TASK = {"high": 0.50, "xhigh": 2.00}
AGENT_PRICE_BASIS = "estimate"
# Extract: not published in providers.md §3 (verify).
EXTRACT_USD_PER_1K: float | None = None
EXTRACT_PRICE_BASIS = "unknown: no list price recorded"
EXTRACT_PRICE_SNAPSHOT = "2026-12-01"
