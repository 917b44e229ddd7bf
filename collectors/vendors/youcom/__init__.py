"""You.com (https://you.com): the Research API (research systems). `X-API-Key: <key>`.

Key: `YDC_API_KEY` (You.com's own name); `YOU_API_KEY` is accepted as a fallback.
"""

from __future__ import annotations

from collectors.products.identity import Auth, Sdk

PROVIDER = "youcom"
KEY_ENV = "YDC_API_KEY"
KEY_ENVS = ("YDC_API_KEY", "YOU_API_KEY")
BASE_URL = "https://api.you.com"
AUTH = Auth("X-API-Key")
SDK = Sdk(package="youdotcom", version="3.6.0", checked_on="2026-12-01")

# --- list prices (USD); dbt's research price seed is held equal to these ------------------
# Research, per exhaustive request, the list price quoted by [V].
RESEARCH_USD_PER_TASK = 0.45
