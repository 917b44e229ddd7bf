"""Exa (https://exa.ai): search lanes, the answer lane, the Agent API and deep-reasoning search
(research systems), contents (live extraction).

Auth: `x-api-key` on every endpoint we call. Exa's agent examples show `Authorization: Bearer`
too (providers.md *verify*); `x-api-key` is the header Exa documents for its API, and the Agent
API accepts it.
"""

from __future__ import annotations

from collectors.products.identity import Auth, Sdk

PROVIDER = "exa"
KEY_ENV = "EXA_API_KEY"
BASE_URL = "https://api.exa.ai"
AUTH = Auth("x-api-key")
SDK = Sdk(package="exa-py", version="2.27.0", checked_on="2026-12-01")

# --- list prices (USD); dbt's price seeds are held equal to these -------------------------
# /search, auto and fast billed alike: per 1,000 queries at 10 results (providers.md §1,
# snapshot 2026-09-17, the search lanes' shared snapshot).
SEARCH_USD_PER_1K = 7.00
# /answer: per 1,000 questions, snapshot 2026-12-01 (unconfirmed at source).
ANSWER_USD_PER_1K = 5.0
ANSWER_PRICE_SNAPSHOT = "2026-12-01"
# /search type deep-reasoning: per request, the list price quoted by [V]. The Agent API is
# billed per run (`costDollars.total`), so it has no list price.
DEEP_REASONING_USD_PER_TASK = 0.015
# /contents: no list price recorded (providers.md §3: verify; `costDollars` is per call).
CONTENTS_USD_PER_1K: float | None = None
CONTENTS_PRICE_BASIS = "unknown: no list price recorded"
CONTENTS_PRICE_SNAPSHOT = "2026-12-01"
