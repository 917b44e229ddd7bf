"""Parallel (https://parallel.ai): search lanes, the Task API (research systems), extract (live
extraction). `x-api-key: <key>`."""

from __future__ import annotations

from collectors.vendors.identity import Auth, Sdk

PROVIDER = "parallel"
KEY_ENV = "PARALLEL_API_KEY"
BASE_URL = "https://api.parallel.ai"
AUTH = Auth("x-api-key")
SDK = Sdk(package="parallel-web", version="1.3.7", checked_on="2026-12-01")

# --- list prices (USD); dbt's price seeds are held equal to these -------------------------
# Search, per 1,000 queries by mode (providers.md §1, snapshot 2026-09-17).
SEARCH_USD_PER_1K = {"basic": 5.00, "turbo": 1.00}
# Task API, per 1,000 runs by processor [N-DR]; snapshot date unknown (providers.md).
TASK_USD_PER_1K = {
    "lite": 5.0,
    "base": 10.0,
    "core": 25.0,
    "core2x": 50.0,
    "pro": 100.0,
    "ultra": 300.0,
    "ultra2x": 600.0,
    "ultra4x": 1200.0,
    "ultra8x": 2400.0,
}
# Extract: no list price recorded (providers.md §3: verify).
EXTRACT_USD_PER_1K: float | None = None
EXTRACT_PRICE_BASIS = "unknown: no list price recorded"
EXTRACT_PRICE_SNAPSHOT = "2026-12-01"
