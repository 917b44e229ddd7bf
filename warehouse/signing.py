"""Signed log heads: an ed25519 key kept outside the data root signs each new head.

Without a key, `bench verify --since HEAD` proves the log extends a head you kept (printed by
`bench publish`); an attacker who can write the data root can still add well-formed segments
after that head. With a key, a writer signs the head every time it seals a segment, and
verification requires the current MANIFEST to be exactly covered by a valid signed head: an
addition or a rewrite made without the key is caught even with no earlier head at hand.

    BENCH_LOG_SIGNING_KEY=/path/outside/data/root/log.key   (PEM, private; writers sign)
    BENCH_LOG_PUBLIC_KEY=/path/log.pub                      (PEM, public; verifiers check)
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from warehouse.merkle import LogHead

SIGNED_HEADS_NAME = "signed-heads.log"  # in the log directory; not a segment (.jsonl)
SIGNING_KEY_ENV = "BENCH_LOG_SIGNING_KEY"
PUBLIC_KEY_ENV = "BENCH_LOG_PUBLIC_KEY"


class SigningError(ValueError):
    pass


def _message(head: LogHead) -> bytes:
    return f"bench-log-head\x1f{head.size}\x1f{head.root}".encode()


def generate_key(private_path: Path, public_path: Path, *, data_root: Path | None = None) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    _outside(private_path, data_root)
    key = Ed25519PrivateKey.generate()
    private_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    public_path.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def _outside(path: Path, data_root: Path | None) -> None:
    if data_root is not None and Path(path).resolve().is_relative_to(Path(data_root).resolve()):
        raise SigningError(
            f"{path}: the signing key must live outside the data root {data_root}; a key next "
            "to the log it signs protects nothing"
        )


def signing_key_from_env(log_dir: Path):
    """The private key named by BENCH_LOG_SIGNING_KEY, or None when signing is off."""
    path = os.environ.get(SIGNING_KEY_ENV)
    if not path:
        return None
    from cryptography.hazmat.primitives import serialization

    _outside(Path(path), Path(log_dir).parent)
    try:
        return serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except (OSError, ValueError) as exc:
        raise SigningError(f"{SIGNING_KEY_ENV}={path}: cannot load the key ({exc})") from None


def public_key_from(path: str | os.PathLike[str] | None):
    path = path or os.environ.get(PUBLIC_KEY_ENV)
    if not path:
        return None
    from cryptography.hazmat.primitives import serialization

    try:
        return serialization.load_pem_public_key(Path(path).read_bytes())
    except (OSError, ValueError) as exc:
        raise SigningError(f"public key {path}: cannot load it ({exc})") from None


def sign_head(log_dir: Path, key, head: LogHead) -> None:
    """Append the signed head; callers hold the manifest lock."""
    from cryptography.hazmat.primitives import serialization

    public = key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    record = {
        **head.to_json(),
        "signed_at": datetime.now(UTC).isoformat(),
        "public_key": public.hex(),
        "signature": key.sign(_message(head)).hex(),
    }
    with open(Path(log_dir) / SIGNED_HEADS_NAME, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def signed_heads(log_dir: Path, public_key) -> tuple[list[LogHead], list[str]]:
    """Heads whose signature verifies under `public_key`, and one message per bad record."""
    from cryptography.exceptions import InvalidSignature

    path = Path(log_dir) / SIGNED_HEADS_NAME
    good: list[LogHead] = []
    bad: list[str] = []
    if not path.exists():
        return good, bad
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record: dict[str, Any] = json.loads(line)
            head = LogHead(int(record["size"]), str(record["root"]), int(record.get("events", 0)))
            public_key.verify(bytes.fromhex(record["signature"]), _message(head))
        except (ValueError, KeyError, TypeError, InvalidSignature):
            bad.append(f"{SIGNED_HEADS_NAME}:{number}: signature does not verify")
            continue
        good.append(head)
    return good, bad
