"""API keys come from the environment only: never from files, arguments or config snapshots."""

from __future__ import annotations

import os
from collections.abc import Mapping


class MissingApiKey(RuntimeError):
    def __init__(self, env_var: str):
        self.env_var = env_var
        super().__init__(f"environment variable {env_var} is not set (the lane's API key)")


def api_key_from_env(env_var: str, environ: Mapping[str, str] | None = None) -> str:
    value = (os.environ if environ is None else environ).get(env_var, "").strip()
    if not value:
        raise MissingApiKey(env_var)
    return value
