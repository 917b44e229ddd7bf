"""The last net for secrets: every configured secret is removed before anything becomes a log
line (the `LogWriter` append boundary) or console output (`bench`'s stdout/stderr).

Collectors redact requests themselves; this catches what they cannot know about: a vendor that
echoes the key back in a response body or error message ("Incorrect API key provided: sk-…"),
an LLM completion quoting it, credentials inside a gateway URL in `argv` or a spec. Forms caught
for each secret: raw, percent-encoded (either case), JSON-escaped (`\\u0073\\u006b…`, any mix of
escaped and plain characters), base64 (standard and URL-safe, at any alignment inside a longer
base64 text); and for every URL, `user:password@` in its authority whatever the password is.

Configured secrets are the values of environment variables whose names say they hold one
(`*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, …), at least `MIN_SECRET_CHARS` long, plus any
value passed to `register_secret`. What was scrubbed is counted, never recorded.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

SCRUBBED = "[REDACTED]"
MIN_SECRET_CHARS = 8
SECRET_ENV_NAME = re.compile(
    r"(API_?KEY|_KEY$|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|_AUTH$)", re.IGNORECASE
)
# user:password@ in the authority of any URL-like text (scheme://user:password@host)
# Names that match the pattern but hold a location, not a secret (the signing key's *path*).
NOT_SECRET_ENV_NAMES = frozenset({"BENCH_LOG_SIGNING_KEY", "BENCH_LOG_PUBLIC_KEY"})
NOT_SECRET_ENV_SUFFIXES = ("_PATH", "_FILE", "_DIR")
URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s:@\"'<>\\]+:[^/\s@\"'<>\\]+@")

_registered: set[str] = set()


def register_secret(value: str) -> None:
    """A secret not held in an environment variable (read from a vault, say)."""
    if value and len(value) >= MIN_SECRET_CHARS:
        _registered.add(value)


def configured_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    found = {
        value.strip()
        for name, value in env.items()
        if SECRET_ENV_NAME.search(name)
        and name not in NOT_SECRET_ENV_NAMES
        and not name.upper().endswith(NOT_SECRET_ENV_SUFFIXES)
        and len(value.strip()) >= MIN_SECRET_CHARS
    }
    return sorted(found | _registered)


def _base64_cores(secret: bytes) -> set[str]:
    """The characters of base64(secret) that do not depend on the bytes around it, for each of
    the three alignments the secret can have inside a longer encoded text."""
    cores: set[str] = set()
    n = len(secret)
    for shift in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * shift + secret + b"\0\0").decode("ascii")
            first = -(-8 * shift // 6)  # first char whose 6 bits all lie in the secret
            last = (8 * (shift + n)) // 6  # one past the last such char
            cores.add(text[first:last])
    return cores


def _escaped_pattern(secret: str) -> str:
    """Each character either as itself or as a JSON \\uXXXX escape (any case)."""
    parts = []
    for char in secret:
        code = f"{ord(char):04x}"
        hex_any = "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in code)
        parts.append(f"(?:{re.escape(char)}|\\\\u{hex_any})")
    return "".join(parts)


class Scrubber:
    def __init__(self, secrets: Iterable[str] = ()):
        forms: set[str] = set()
        escaped: list[str] = []
        for secret in secrets:
            if not secret or len(secret) < MIN_SECRET_CHARS:
                continue
            for form in (secret, quote(secret, safe=""), quote_plus(secret)):
                forms.update({form, re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), form)})
            forms.update(_base64_cores(secret.encode("utf-8")))
            escaped.append(_escaped_pattern(secret))
        # Longest first: a secret that contains another is replaced whole, not in halves.
        self.forms = tuple(sorted(forms, key=len, reverse=True))
        # How each form appears inside canonical JSON text (quotes and backslashes escaped).
        self._line_forms = tuple({json.dumps(f, ensure_ascii=False)[1:-1] for f in self.forms})
        alternatives = [re.escape(f) for f in self.forms] + escaped
        self._pattern = re.compile("|".join(alternatives)) if alternatives else None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Scrubber:
        return cls(configured_secrets(environ))

    def line_needs_scrub(self, line: str) -> bool:
        """Cheap test on a canonical JSON line: could any string in it hold a secret?"""
        if "://" in line and "@" in line and URL_CREDENTIALS.search(line):
            return True
        if self._pattern is None:
            return False
        if any(form in line for form in self._line_forms):
            return True
        # A \\uXXXX escape in the line (a control character, or a literal backslash-u inside a
        # string): maybe a secret spelled in escapes; the exact test runs on the decoded strings.
        return "\\u" in line

    def text(self, value: str) -> tuple[str, int]:
        count = 0
        if self._pattern is not None:
            value, count = self._pattern.subn(SCRUBBED, value)
        if "://" in value and "@" in value:
            value, more = URL_CREDENTIALS.subn(rf"\1{SCRUBBED}@", value)
            count += more
        return value, count

    def value(self, value: Any) -> tuple[Any, int]:
        """A JSON-shaped value with every string, keys included, scrubbed; and the count."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            out, total = {}, 0
            for key, item in value.items():
                new_key, n_key = self.text(str(key))
                new_item, n_item = self.value(item)
                out[new_key] = new_item
                total += n_key + n_item
            return out, total
        if isinstance(value, list | tuple):
            items, total = [], 0
            for item in value:
                new_item, n = self.value(item)
                items.append(new_item)
                total += n
            return items, total
        return value, 0


class ScrubbingStream(io.TextIOBase):
    """A text stream that scrubs what is written through it (the CLI's stdout and stderr)."""

    def __init__(self, stream, scrubber: Scrubber):
        self._stream = stream
        self._scrubber = scrubber

    def write(self, text: str) -> int:
        self._stream.write(self._scrubber.text(text)[0])
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def scrub_console() -> None:
    """Route this process's stdout and stderr through a scrubber of the configured secrets."""
    import sys

    scrubber = Scrubber.from_env()
    if not isinstance(sys.stdout, ScrubbingStream):
        sys.stdout = ScrubbingStream(sys.stdout, scrubber)
    if not isinstance(sys.stderr, ScrubbingStream):
        sys.stderr = ScrubbingStream(sys.stderr, scrubber)
