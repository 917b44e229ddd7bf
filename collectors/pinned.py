"""Download files only if their bytes hash to a pinned sha256; nothing half-written survives.

Shared by every dataset and template we fetch (SimpleQA, the grader template, the extraction
benchmark): bounded retries on transport errors, 429 and 5xx; a hash mismatch is final."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_random_exponential

from warehouse.canonical import sha256_hex


class PinError(ValueError):
    """The pinned file could not be fetched, or its bytes are not the pinned ones."""


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, httpx.TransportError):
        return True
    return isinstance(exc, httpx.HTTPStatusError) and (
        exc.response.status_code == 429 or exc.response.status_code >= 500
    )


@retry(
    retry=retry_if_exception(_retryable),
    stop=stop_after_attempt(4),
    wait=wait_random_exponential(multiplier=0.5, max=8),
    reraise=True,
)
def _get(client: httpx.Client, url: str) -> bytes:
    response = client.get(url)
    response.raise_for_status()
    return response.content


def new_client() -> httpx.Client:
    return httpx.Client(timeout=httpx.Timeout(60.0), follow_redirects=True)


def get_pinned_bytes(client: httpx.Client, url: str, expected_sha256: str) -> bytes:
    """The body of `url`, or PinError if it cannot be fetched or is not the pinned bytes."""
    try:
        data = _get(client, url)
    except httpx.HTTPError as exc:
        raise PinError(f"{url}: download failed ({exc})") from exc
    actual = sha256_hex(data)
    if actual != expected_sha256:
        raise PinError(
            f"{url}: sha256 {actual} does not match the pinned {expected_sha256}; "
            "refusing a drifted or modified copy (nothing was written)"
        )
    return data


def fetch_pinned(
    url: str, dest: Path, expected_sha256: str, *, client: httpx.Client | None = None
) -> Path:
    """Fetch `url` into `dest` if its bytes hash to `expected_sha256` (atomic rename)."""
    dest = Path(dest)
    own_client = client is None
    client = client or new_client()
    try:
        data = get_pinned_bytes(client, url, expected_sha256)
    finally:
        if own_client:
            client.close()
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.parent / f".{dest.name}.partial-{os.getpid()}"
    partial.write_bytes(data)
    partial.replace(dest)
    return dest
