"""RFC 6962 Merkle tree hash over the MANIFEST's records, and the log head it gives.

Every MANIFEST line is one leaf, in order: `open` (a writer started a segment), `seal` (the
segment's line count, byte size and last chain hash, which commits to every line of it) and
`accept` (a recorded acceptance of a failed verification). So one root covers every sealed
line of every segment, in order, and the MANIFEST itself. A head is (size = leaves, root).

A log extends an earlier head when the tree over its first `size` leaves has that root
(Certificate Transparency's consistency, checked by recomputation: the verifier holds all
leaves). Heads can be signed with an ed25519 key kept outside the data root (`signing.py`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def tree_root(leaves: list[bytes]) -> bytes:
    """MTH of RFC 6962 §2.1 over already-hashed leaves (iterative, any size)."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    # Bottom-up with RFC 6962's split (largest power of two below n): pairing left to right
    # and carrying an odd last node up unchanged gives the same tree.
    level = list(leaves)
    while len(level) > 1:
        paired = [_node(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


@dataclass(frozen=True)
class LogHead:
    size: int  # MANIFEST records covered
    root: str  # hex
    events: int = 0  # sealed lines covered (informative; the root is what binds)

    def __str__(self) -> str:
        return f"{self.size}:{self.root}"

    @classmethod
    def parse(cls, text: str) -> LogHead:
        """`SIZE:ROOT` as `bench publish` and `bench verify` print it."""
        size, sep, root = text.strip().partition(":")
        if not sep or not size.isdigit() or len(root) != 64:
            raise ValueError(
                f"log head {text!r}: expected SIZE:ROOT as `bench publish` prints it "
                "(e.g. 12:3f2a…, 64 hex digits)"
            )
        int(root, 16)
        return cls(int(size), root.lower())

    def to_json(self) -> dict[str, object]:
        return {"size": self.size, "root": self.root, "events": self.events}


def head_of(leaf_hashes: list[bytes], events: int = 0) -> LogHead:
    return LogHead(len(leaf_hashes), tree_root(leaf_hashes).hex(), events)
