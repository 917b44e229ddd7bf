"""The one bound on error messages stored in events (a vendor can echo a whole HTML page)."""

from __future__ import annotations

MAX_ERROR_MESSAGE_CHARS = 2_000


def truncate_message(message: str, limit: int = MAX_ERROR_MESSAGE_CHARS) -> str:
    """`message` cut to `limit` characters, saying how long it was."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}… [truncated, {len(message)} chars]"
