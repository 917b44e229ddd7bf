"""Valyu (https://valyu.ai): DeepResearch (research systems). `X-API-Key: <key>`."""

from __future__ import annotations

from collectors.products.identity import Auth, Sdk

PROVIDER = "valyu"
KEY_ENV = "VALYU_API_KEY"
BASE_URL = "https://api.valyu.ai"
AUTH = Auth("X-API-Key")
SDK = Sdk(package="valyu", version="2.13.1", checked_on="2026-12-01")

# --- list prices (USD); dbt's research price seed is held equal to these ------------------
# DeepResearch, per task by mode, as quoted by [V] (only heavy was run there).
DEEPRESEARCH_USD_PER_TASK = {"heavy": 2.50}
