"""Perplexity (https://docs.perplexity.ai): deep research through the Agent API (research
systems). `Authorization: Bearer <key>`."""

from __future__ import annotations

from collectors.products.identity import BEARER, Sdk

PROVIDER = "perplexity"
KEY_ENV = "PERPLEXITY_API_KEY"
BASE_URL = "https://api.perplexity.ai"
AUTH = BEARER
SDK = Sdk(package="perplexityai", version="0.46.1", checked_on="2026-12-01")
# No list price per task: the Agent API bills model tokens plus tool fees (`usage.cost`).
