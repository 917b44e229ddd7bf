"""The two small types a vendor module declares itself with: how a request carries the key
(`Auth`, which also builds the JSON POST most vendor calls are) and which official SDK release
the clients were checked against (`Sdk`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from collectors.http.model import ProviderRequest
from collectors.http.vendor_truth import SdkCheck

JSON_ACCEPT = {"Accept": "application/json"}


@dataclass(frozen=True)
class Auth:
    """The key travels in one header, as `prefix + key` (`Bearer ` or nothing)."""

    header: str
    prefix: str = ""

    def header_for(self, api_key: str) -> dict[str, str]:
        return {self.header: f"{self.prefix}{api_key}"}

    def json_headers(self, api_key: str) -> dict[str, str]:
        """The key header, then `Accept: application/json` (the order every client sends)."""
        return {**self.header_for(api_key), **JSON_ACCEPT}

    def post(self, base_url: str, path: str, api_key: str, body: Any) -> ProviderRequest:
        """POST `body` as JSON to `base_url` + `path` with the key: most vendor calls."""
        return ProviderRequest(
            method="POST",
            url=f"{base_url.rstrip('/')}{path}",
            headers=self.json_headers(api_key),
            json_body=body,
        )


BEARER = Auth("Authorization", "Bearer ")


@dataclass(frozen=True)
class Sdk:
    """The vendor's official SDK release its clients' requests and parsers were held against
    (the contract tests use it; the collectors never import it)."""

    package: str  # the distribution name on the package registry
    version: str
    checked_on: str  # ISO date

    def __post_init__(self) -> None:
        date.fromisoformat(self.checked_on)

    def check(self, docs: str) -> SdkCheck:
        """The SdkCheck record of one product's client, naming the docs page it follows."""
        return SdkCheck(
            package=self.package, version=self.version, docs=docs, checked_on=self.checked_on
        )
