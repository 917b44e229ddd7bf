"""Google Gemini API (https://ai.google.dev): Deep Research through the Interactions API
(research systems). `x-goog-api-key: <key>`."""

from __future__ import annotations

from collectors.products.identity import Auth, Sdk

PROVIDER = "gemini"
KEY_ENV = "GEMINI_API_KEY"
BASE_URL = "https://generativelanguage.googleapis.com"
AUTH = Auth("x-goog-api-key")
SDK = Sdk(package="google-genai", version="3.6.1", checked_on="2026-12-01")
# No list price per task: Deep Research bills model tokens (no price seed row).
