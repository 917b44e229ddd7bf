"""Secret removal: nothing that authenticates us may reach an event, a log line or an error.

Three nets, applied together: values of auth headers, values of key-like query parameters, and
any occurrence of a known key string (raw, percent-encoded, form-encoded or JSON-escaped)
anywhere in a URL, header, body or message. The last one catches vendors that echo the key back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus, unquote_plus, urlsplit, urlunsplit

from warehouse.events import RecordedRequest

REDACTED = "[REDACTED]"

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-subscription-token",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
    }
)
SECRET_QUERY_PARAMS = frozenset(
    {"key", "api_key", "apikey", "api-key", "token", "access_token", "auth", "subscription_token"}
)


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()):
        forms: set[str] = set()
        for secret in secrets:
            if secret:
                forms.update({secret, quote(secret, safe=""), quote_plus(secret)})
                # As it appears inside JSON text: escaped quotes/backslashes, and "\/" for "/"
                # (some servers escape slashes), so an echoed key is caught in raw bodies too.
                escaped = json.dumps(secret)[1:-1]
                forms.update({escaped, escaped.replace("/", "\\/")})
        # Longest first: a key that contains another key is replaced whole, not half.
        self._forms = tuple(sorted(forms, key=len, reverse=True))

    def text(self, value: str) -> str:
        for form in self._forms:
            if form in value:
                value = value.replace(form, REDACTED)
        return value

    def url(self, url: str) -> str:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:  # credentials in the authority (user:password@host)
            netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
        query = (
            "&".join(_redact_query_pair(pair) for pair in parts.query.split("&"))
            if parts.query
            else ""
        )
        rebuilt = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
        return self.text(rebuilt)

    def headers(self, headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
        items = headers.items() if isinstance(headers, Mapping) else headers
        out: dict[str, str] = {}
        for name, value in items:
            lowered = name.lower()
            out[lowered] = REDACTED if lowered in SECRET_HEADERS else self.text(value)
        return out

    def value(self, value: Any) -> Any:
        """A JSON-shaped value with every string (keys included) passed through `text`."""
        kind = type(value)
        if kind is str:
            return self.text(value)
        if value is None or kind is int or kind is float or kind is bool:
            return value  # the common scalars, before the (slow) ABC check below
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def request(
        self, method: str, url: str, headers: Mapping[str, str], body: Any
    ) -> RecordedRequest:
        return RecordedRequest(
            method=method.upper(),
            url=self.url(url),
            headers=self.headers(headers),
            body=self.value(body),
        )


def _redact_query_pair(pair: str) -> str:
    name, sep, _value = pair.partition("=")
    if sep and unquote_plus(name).lower() in SECRET_QUERY_PARAMS:
        return f"{name}={REDACTED}"
    return pair


def redact(value: Any, secrets: Iterable[str]) -> Any:
    """One-off redaction of a string or JSON-shaped value (see `Redactor` for reuse)."""
    return Redactor(secrets).value(value)
